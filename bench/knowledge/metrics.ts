// The retrieval evaluation's figures, as small pure functions over what a peer answered (README.md beside this file
// defines each one): recall@k over distinct sources, refusal of out-of-scope questions and false refusal of answerable
// ones at a relevance threshold, and search latency percentiles.
import { percentile } from '../lib/stats.ts';
import type { Question } from './data.ts';

/** What a peer answered to one question: the articles of its results in rank order, and its best score. */
export interface Answer {
  question: Question;
  /** The article id of each result, best first, repeats included (a long article can give several passages). */
  articles: string[];
  /** The highest score among the results; undefined when there were none. */
  topScore: number | undefined;
}

/** The ids in the order they first appear, each once. */
export function distinctInOrder(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}

/** True when one of the `expected` articles is among the first `k` distinct articles of the ranking. */
export function foundAtK(expected: readonly string[], ranking: readonly string[], k: number): boolean {
  const top = distinctInOrder(ranking).slice(0, k);
  return expected.some((id) => top.includes(id));
}

/** True when each topic has one of its articles among the first `k` distinct articles (two-topic questions). */
export function topicsFoundAtK(
  topics: readonly (readonly string[])[],
  ranking: readonly string[],
  k: number,
): boolean {
  return topics.length > 0 && topics.every((topic) => foundAtK(topic, ranking, k));
}

const inScope = (answers: readonly Answer[]) => answers.filter((a) => a.question.scope === 'in');
const outOfScope = (answers: readonly Answer[]) => answers.filter((a) => a.question.scope === 'out');
const share = (count: number, of: number) => (of === 0 ? Number.NaN : count / of);

/**
 * recall@k: the share of in-scope questions found at k (out-of-scope ones are left out). It ignores the
 * relevance threshold: it measures the ranking; refusals are measured apart.
 */
export function recallAtK(answers: readonly Answer[], k: number): number {
  const scoped = inScope(answers);
  return share(scoped.filter((a) => foundAtK(a.question.expected, a.articles, k)).length, scoped.length);
}

/** both@k: the share of two-topic questions with every topic found at k. */
export function topicRecallAtK(answers: readonly Answer[], k: number): number {
  const multi = inScope(answers).flatMap((a) =>
    a.question.scope === 'in' && a.question.topics !== undefined ? [{ a, topics: a.question.topics }] : [],
  );
  return share(multi.filter(({ a, topics }) => topicsFoundAtK(topics, a.articles, k)).length, multi.length);
}

/** A question is refused when nothing came back or its best result scores below the threshold. */
export function isRefused(topScore: number | undefined, threshold: number): boolean {
  return topScore === undefined || Number.isNaN(topScore) || topScore < threshold;
}

export interface Refusals {
  /** Out-of-scope questions refused, as a share of all out-of-scope questions (higher is better). */
  outOfScopeRefused: number;
  /** In-scope questions refused although an article answers them, as a share of them (lower is better). */
  falseRefusals: number;
  outOfScope: number;
  inScope: number;
}

export function refusals(answers: readonly Answer[], threshold: number): Refusals {
  const outs = outOfScope(answers);
  const ins = inScope(answers);
  return {
    outOfScopeRefused: share(outs.filter((a) => isRefused(a.topScore, threshold)).length, outs.length),
    falseRefusals: share(ins.filter((a) => isRefused(a.topScore, threshold)).length, ins.length),
    outOfScope: outs.length,
    inScope: ins.length,
  };
}

/**
 * Refusals at each threshold: the trade-off a relevance line makes. Thresholds read off this table were chosen
 * on the questions they are measured on, so the figures at them are optimistic.
 */
export function refusalSweep(
  answers: readonly Answer[],
  thresholds: readonly number[],
): Array<{ threshold: number } & Refusals> {
  return thresholds.map((threshold) => ({ threshold, ...refusals(answers, threshold) }));
}

/** The `qs` quantiles (0 to 1, nearest rank) of the best scores of answers that had results, ascending. */
export function scoreQuantiles(answers: readonly Answer[], qs: readonly number[]): number[] {
  const scores = answers.flatMap((a) => (a.topScore === undefined ? [] : [a.topScore]));
  const sorted = Float64Array.from(scores).sort();
  return qs.map((q) => percentile(sorted, q * 100, true));
}

/** recall@k per question style (paraphrase, typo, …) for in-scope questions, in first-seen order. */
export function recallByStyle(
  answers: readonly Answer[],
  k: number,
): Array<{ style: string; questions: number; recall: number }> {
  const groups = new Map<string, Answer[]>();
  for (const a of inScope(answers))
    groups.set(a.question.style, [...(groups.get(a.question.style) ?? []), a]);
  return [...groups].map(([style, group]) => ({
    style,
    questions: group.length,
    recall: recallAtK(group, k),
  }));
}

export interface Latency {
  samples: number;
  p50: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentiles of search times (milliseconds). */
export function latencySummary(samplesMs: readonly number[]): Latency {
  const sorted = Float64Array.from(samplesMs).sort();
  return {
    samples: sorted.length,
    p50: percentile(sorted, 50, true),
    p99: percentile(sorted, 99, true),
    max: sorted.length === 0 ? 0 : sorted[sorted.length - 1]!,
  };
}

/**
 * The two fixed halves of the question set: `dev` (odd ids: q001, q003, …) for tuning ranking, `test` (even ids) for
 * reporting how well that tuning carries over to questions it was not tuned on. Questions were written article by
 * article, so alternating ids gives each half questions about every article and of every style.
 */
export type Half = 'dev' | 'test';

export function halfOf(question: Question): Half {
  return Number(question.id.slice(1)) % 2 === 1 ? 'dev' : 'test';
}

/** The answers to the questions of one half. */
export function inHalf(answers: readonly Answer[], half: Half): Answer[] {
  return answers.filter((a) => halfOf(a.question) === half);
}
