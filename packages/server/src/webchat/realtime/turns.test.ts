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

  it('with a budget, starts as many tasks per turn as fit the budget: fewer while they are costly, more once cheap', async () => {
    // The injected clock: each task takes `cost` ms of it, as its share of the event-loop iteration.
    let clock = 0;
    const turns = new TurnTaker(4, { ms: 8, max: 16, now: () => clock });
    const limits: number[] = [];
    const burst = (count: number, cost: number) =>
      Promise.all(
        Array.from({ length: count }, () =>
          turns.run(async () => {
            limits.push(turns.limit);
            clock += cost;
          }),
        ),
      );
    // 4 ms each against a budget of 8: a turn of 4 takes 16 ms, so the count halves to the 2 that fit, and stays.
    await burst(20, 4);
    assert.equal(limits[0], 4);
    assert.equal(limits.at(-1), 2, `settles at what fits the budget: ${limits.join(', ')}`);
    // Cheap tasks (the streams ended): the count doubles at most per turn, up to max.
    limits.length = 0;
    await burst(60, 0.5);
    assert.equal(limits.at(-1), 16, `grows to max: ${limits.join(', ')}`);
    assert.ok(
      limits.every((limit, i) => i === 0 || limit <= 2 * limits[i - 1]!),
      'at most doubled per turn',
    );
    assert.throws(() => new TurnTaker(4, { ms: 8, max: 2 }), RangeError);
  });
});
