import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TurnTaker } from './turns.ts';

/** Holds the thread for `ms`, as a synchronous SQLite write would. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {}
}

describe('TurnTaker', () => {
  it('starts at most perTurn tasks per event-loop turn, in arrival order, and lets timers run between', async () => {
    const turns = new TurnTaker(2);
    const events: string[] = [];
    const burst = () =>
      Promise.all(
        [1, 2, 3, 4, 5, 6].map((n) =>
          turns.run(async () => {
            events.push(`task${n}`);
            busy(3);
            return n * 10;
          }),
        ),
      );
    // The burst arrives in one callback (as frames do), with a timer already due: a stream's next word.
    const results = await new Promise<number[]>((resolve) =>
      setImmediate(() => {
        setTimeout(() => events.push('timer'), 0);
        busy(2);
        resolve(burst());
      }),
    );
    assert.deepEqual(results, [10, 20, 30, 40, 50, 60]);
    // Two tasks in the turn the burst arrived in; the due timer fires before the rest, which follow in order.
    assert.deepEqual(events.slice(0, 3), ['task1', 'task2', 'timer']);
    assert.deepEqual(
      events.filter((e) => e !== 'timer'),
      ['task1', 'task2', 'task3', 'task4', 'task5', 'task6'],
    );
    assert.equal(turns.backlog, 0);
  });

  it('starts a task at once when the turn has room, and passes failures through', async () => {
    const turns = new TurnTaker(4);
    let started = false;
    const running = turns.run(async () => {
      started = true;
    });
    assert.equal(started, true);
    await running;
    await assert.rejects(
      turns.run(async () => {
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.throws(() => new TurnTaker(0), RangeError);
  });
});
