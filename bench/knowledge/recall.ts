// The retrieval figures alone, quickly: the help centre indexed by each feature peer (SQLite, PostgreSQL) and every
// question asked, without the filler and the timings of knowledge.bench.ts. For tuning ranking on the `dev` half of
// the questions (metrics.ts `halfOf`) and checking the `test` half; README.md beside this file.
//
//   node --import tsx bench/knowledge/recall.ts [--misses] [--sqlite|--postgres]
import { readCorpus, readQuestions, readSynonyms } from './data.ts';
import { askAll, indexArticles, type SourceMap } from './evaluate.ts';
import { featurePeer } from './feature.ts';
import {
  distinctInOrder,
  foundAtK,
  type Half,
  inHalf,
  recallAtK,
  recallByStyle,
  refusals,
} from './metrics.ts';

const stores = (['sqlite', 'postgres'] as const).filter(
  (s) => !process.argv.includes(`--${s === 'sqlite' ? 'postgres' : 'sqlite'}`),
);
const articles = readCorpus();
const questions = readQuestions(articles);
const f = (x: number) => x.toFixed(3);
// Each store without and with the company's synonyms (README.md "Company synonyms"), in the same sitting.
const synonyms = readSynonyms();
for (const [store, withSynonyms] of stores.flatMap((s) => [[s, false] as const, [s, true] as const])) {
  const peer = await featurePeer(store, withSynonyms ? { synonyms } : {}).start();
  try {
    const sources: SourceMap = new Map();
    await indexArticles(peer, 'fernhill', articles, sources);
    const answers = await askAll(peer, 'fernhill', questions, sources);
    for (const half of ['dev', 'test', 'all'] as Array<Half | 'all'>) {
      const part = half === 'all' ? answers : inHalf(answers, half);
      const r = refusals(part, peer.relevanceThreshold);
      const typo = recallByStyle(part, 3).find((s) => s.style === 'typo')?.recall ?? 0;
      console.log(
        `${peer.name.padEnd(22)} ${half.padEnd(5)} recall@1 ${f(recallAtK(part, 1))}  recall@3 ${f(recallAtK(part, 3))}` +
          `  typo recall@3 ${f(typo)}  out-of-scope refused ${f(r.outOfScopeRefused)}  false refusals ${f(r.falseRefusals)}`,
      );
    }
    if (process.argv.includes('--misses'))
      for (const a of answers)
        if (a.question.scope === 'in' && !foundAtK(a.question.expected, a.articles, 3))
          console.log(
            `  ${a.question.id} "${a.question.query}" wants ${a.question.expected.join(' | ')}; got ${distinctInOrder(a.articles).slice(0, 3).join(', ')}`,
          );
    if (process.argv.includes('--refusals'))
      for (const a of answers)
        if (
          (a.question.scope === 'out') !==
          (a.topScore === undefined || a.topScore < peer.relevanceThreshold)
        )
          console.log(
            `  ${a.question.scope} ${a.question.id} ${a.topScore?.toFixed(3)} "${a.question.query}"`,
          );
  } finally {
    await peer.close();
  }
}
