import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { computeFigures } from './figures.ts';
import { missedGoals, type Verdict, verdictLines } from './report.ts';

/** A run whose figures are all good: 2 acknowledged messages, stored, each shown complete, answering in 1 s. */
function verdict(delivered: number): Verdict {
  const figures = { ...computeFigures([], []), acked: 2, stored: 2, delivered };
  return {
    figures,
    answersAgainMs: [1_000],
    answersAgainBoundMs: 30_000,
    answersAgainGoalMs: 15_000,
    nodesAlive: 2,
    nodes: 2,
    problems: [],
    notes: [],
    artifacts: 'test-artifacts/faults/x',
    passed: false,
  };
}

describe('fault verdict', () => {
  it('passes when every acknowledged message is shown complete by its client', () => {
    const v = verdict(2);
    assert.deepEqual(missedGoals(v), []);
    assert.match(verdictLines('x', v).at(-1)!, / PASS$/);
  });

  it('fails when an acknowledged message is stored but its client never showed it complete', () => {
    const v = verdict(1);
    assert.deepEqual(missedGoals(v), ['1 acknowledged message(s) never shown complete by their client']);
    const lines = verdictLines('x', v);
    assert.equal(v.passed, false);
    assert.match(lines.at(-1)!, /delivered=1 .* FAIL$/);
  });
});
