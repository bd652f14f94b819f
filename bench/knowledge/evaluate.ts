// The steps of the knowledge bench for one peer, kept apart from the printing so that a test can drive them: index
// articles, ask the questions, add filler up to a number of passages, and time searches.
import type { Article, Question } from './data.ts';
import type { Answer } from './metrics.ts';
import type { KnowledgePeer } from './peer.ts';

/** The bench asks for this many passages per question (the search route's maximum), then counts distinct sources. */
export const SEARCH_LIMIT = 20;

/** Which article each of the peer's source ids stands for. */
export type SourceMap = Map<string, string>;

export interface Indexed {
  chunks: number;
  articles: number;
  milliseconds: number;
}

/** Adds `articles` to the company one after another, recording each source id. */
export async function indexArticles(
  peer: KnowledgePeer,
  companyId: string,
  articles: Iterable<Article>,
  sources: SourceMap,
): Promise<Indexed> {
  const started = performance.now();
  let chunks = 0;
  let count = 0;
  for (const article of articles) {
    const added = await peer.add(companyId, article);
    sources.set(added.sourceId, article.id);
    chunks += added.chunks;
    count++;
  }
  return { chunks, articles: count, milliseconds: performance.now() - started };
}

/**
 * Adds articles from `filler` until the company holds at least `target` passages (`already` are there), so that
 * a peer whose chunking makes fewer, larger passages still gets an index of the size the figures name.
 */
export async function fillTo(
  peer: KnowledgePeer,
  companyId: string,
  filler: Iterator<Article>,
  already: number,
  target: number,
  sources: SourceMap,
): Promise<Indexed> {
  const started = performance.now();
  let chunks = 0;
  let count = 0;
  while (already + chunks < target) {
    const next = filler.next();
    if (next.done) throw new Error(`the filler ran out at ${already + chunks} passages`);
    const added = await peer.add(companyId, next.value);
    sources.set(added.sourceId, next.value.id);
    chunks += added.chunks;
    count++;
  }
  return { chunks, articles: count, milliseconds: performance.now() - started };
}

/** Each question's answer from the peer, its results mapped back to article ids. */
export async function askAll(
  peer: KnowledgePeer,
  companyId: string,
  questions: readonly Question[],
  sources: SourceMap,
): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const question of questions) {
    const results = await peer.search(companyId, question.query, SEARCH_LIMIT);
    answers.push({
      question,
      articles: results.map((r) => sources.get(r.sourceId) ?? `unknown source ${r.sourceId}`),
      topScore: results.length === 0 ? undefined : Math.max(...results.map((r) => r.score)),
    });
  }
  return answers;
}

/** Times `rounds` passes over the queries, one search at a time, after one pass that is not timed (warm-up). */
export async function timeSearches(
  peer: KnowledgePeer,
  companyId: string,
  queries: readonly string[],
  rounds: number,
): Promise<number[]> {
  for (const query of queries) await peer.search(companyId, query, SEARCH_LIMIT);
  const samples: number[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const query of queries) {
      const started = performance.now();
      await peer.search(companyId, query, SEARCH_LIMIT);
      samples.push(performance.now() - started);
    }
  }
  return samples;
}
