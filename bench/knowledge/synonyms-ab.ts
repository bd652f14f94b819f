// Search time with and without the company's synonyms (README.md "Company synonyms"), side by side in one process on
// one index: the help centre and the filler up to 10,000 passages in one company, then timed passes of the 346
// questions and the 200 catalogue searches, alternating between the company without its list and with
// corpus/synonyms.json (the list is replaced between passes, never during one). Not a `*.bench.ts`:
//
//   node --import tsx bench/knowledge/synonyms-ab.ts [--sqlite|--postgres] [--passes N]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropTestSchema, uniqueSchema } from '@parley/testing/databases';
import { loadConfig } from '../../packages/server/src/config/load.ts';
import { createContext } from '../../packages/server/src/context.ts';
import { createLogger } from '../../packages/server/src/logging/logger.ts';
import { readCorpus, readQuestions, readSynonyms } from './data.ts';
import { SEARCH_LIMIT } from './evaluate.ts';
import { latencySummary } from './metrics.ts';
import { catalogueQueries, scaleArticles } from './scale.ts';

const store = process.argv.includes('--postgres') ? 'postgres' : 'sqlite';
const passesArg = process.argv.indexOf('--passes');
const PASSES = passesArg === -1 ? 6 : Number(process.argv[passesArg + 1]);
const TARGET = 10_000;
const databaseUrl =
  store === 'postgres'
    ? (process.env.BENCH_DATABASE_URL ??
      process.env.DATABASE_URL ??
      'postgres://postgres@127.0.0.1:5432/test')
    : undefined;
const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-synonyms-'));
const schema = databaseUrl ? uniqueSchema() : undefined;
const config = loadConfig({}, { dataDir, logLevel: 'error', ...(databaseUrl ? { databaseUrl } : {}) });
const ctx = await createContext(config, createLogger('error'), { schema });
try {
  const company = (await ctx.companies.create('Bench synonyms')).id;
  const articles = readCorpus();
  const questions = readQuestions(articles).map((q) => q.query);
  const catalogue = catalogueQueries(200);
  let chunks = 0;
  const add = async (a: (typeof articles)[number]) => {
    const s = await ctx.knowledge.create(
      company,
      { kind: 'text', title: a.title, content: a.content, contentType: a.contentType, url: a.url },
      { actor: 'bench' },
    );
    chunks += s.chunks;
  };
  for (const a of articles) await add(a);
  const filler = scaleArticles();
  while (chunks < TARGET) await add(filler.next().value as (typeof articles)[number]);
  await ctx.knowledge.maintainIndex();
  const synonyms = readSynonyms();
  const samples = {
    without: { q: [] as number[], c: [] as number[] },
    with: { q: [] as number[], c: [] as number[] },
  };
  const time = async (queries: readonly string[], into: number[]) => {
    for (const query of queries) {
      const started = performance.now();
      await ctx.knowledge.search(company, query, { limit: SEARCH_LIMIT });
      into.push(performance.now() - started);
    }
  };
  // An untimed warm-up of both, then passes alternating without / with.
  for (const list of [{ synonyms: [] }, synonyms]) {
    await ctx.knowledge.setSynonyms(company, list, { actor: 'bench' });
    await time([...questions, ...catalogue], []);
  }
  for (let pass = 0; pass < PASSES; pass++) {
    const withList = pass % 2 === 1;
    await ctx.knowledge.setSynonyms(company, withList ? synonyms : { synonyms: [] }, { actor: 'bench' });
    const into = withList ? samples.with : samples.without;
    await time(questions, into.q);
    await time(catalogue, into.c);
  }
  const f = (x: number) => x.toFixed(2);
  console.log(`${store}, ${chunks} passages, ${PASSES / 2} passes each, ms p50 / p99 (max)`);
  for (const [name, s] of Object.entries(samples)) {
    const q = latencySummary(s.q);
    const c = latencySummary(s.c);
    console.log(
      `${name.padEnd(8)} questions ${f(q.p50)} / ${f(q.p99)} (${f(q.max)})  catalogue ${f(c.p50)} / ${f(c.p99)} (${f(c.max)})`,
    );
  }
} finally {
  await ctx.close();
  if (schema && databaseUrl) await dropTestSchema(schema, databaseUrl);
  rmSync(dataDir, { recursive: true, force: true });
}
