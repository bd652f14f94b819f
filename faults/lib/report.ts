// One verdict line per scenario, and the goals it is judged by: 0 lost, every acknowledged message shown complete by
// its client, 0 duplicated, 0 left partial, every node alive afterwards, answering again within 15 s.
import type { Figures } from './figures.ts';

export interface Verdict {
  figures: Figures;
  /** Every "answers again" measurement of the run (null: not within the bound). */
  answersAgainMs: Array<number | null>;
  answersAgainBoundMs: number;
  answersAgainGoalMs: number;
  nodesAlive: number;
  nodes: number;
  /** Goals missed that the figures do not show. */
  problems: string[];
  notes: string[];
  /** The run's logs and records, named when the verdict fails. */
  artifacts: string;
  passed: boolean;
}

/** The reasons a verdict fails; empty when every goal is met. */
export function missedGoals(v: Verdict): string[] {
  const missed: string[] = [];
  const f = v.figures;
  if (f.lost > 0) missed.push(`${f.lost} acknowledged message(s) lost`);
  // Stored but never shown: the client believes it is following the conversation while it silently is not.
  if (f.delivered < f.acked)
    missed.push(`${f.acked - f.delivered} acknowledged message(s) never shown complete by their client`);
  if (f.duplicates > 0) missed.push(`${f.duplicates} duplicate(s)`);
  if (f.partialInDatabase > 0) missed.push(`${f.partialInDatabase} message(s) left partial in the database`);
  if (f.partialOnlyInClient > 0)
    missed.push(`${f.partialOnlyInClient} message(s) complete in the database but shown partial by a client`);
  if (v.nodesAlive < v.nodes) missed.push(`${v.nodes - v.nodesAlive} node(s) not alive`);
  if (v.answersAgainMs.length === 0) missed.push('"answers again" was not measured');
  for (const ms of v.answersAgainMs) {
    if (ms === null) missed.push(`no answer within ${v.answersAgainBoundMs / 1000} s`);
    else if (ms > v.answersAgainGoalMs) missed.push(`answered again only after ${(ms / 1000).toFixed(1)} s`);
  }
  return [...missed, ...v.problems];
}

function answersAgainFigure(v: Verdict): string {
  if (v.answersAgainMs.length === 0) return 'n/a';
  if (v.answersAgainMs.some((ms) => ms === null)) return `>${v.answersAgainBoundMs / 1000}s`;
  return `${(Math.max(...(v.answersAgainMs as number[])) / 1000).toFixed(1)}s`;
}

/** Detail lines (why it failed, what was noticed), then the one summary line. Sets `passed`. */
export function verdictLines(name: string, v: Verdict): string[] {
  const missed = missedGoals(v);
  v.passed = missed.length === 0;
  const f = v.figures;
  const summary = [
    `${name}:`,
    `acked=${f.acked}`,
    `stored=${f.stored}`,
    `lost=${f.lost}`,
    `delivered=${f.delivered}`,
    `dup=${f.duplicates}`,
    `partial=${f.partial}`,
    `unanswered=${f.unanswered}`,
    `answers_again=${answersAgainFigure(v)}`,
    `nodes_alive=${v.nodesAlive}/${v.nodes}`,
    `replies_shown=${f.repliesShown}/${f.replies}`,
    `errored=${f.errored}`,
    `taken_back=${f.takenBack}`,
    `gave_up=${f.gaveUp}`,
    `unrecovered=${f.recoveryFailures}`,
    v.passed ? 'PASS' : 'FAIL',
  ].join(' ');
  const where = v.passed ? [] : [`  · logs and records: ${v.artifacts}`];
  return [...missed.map((m) => `  ✗ ${m}`), ...v.notes.map((n) => `  · ${n}`), ...where, summary];
}
