import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { type JobOutcome, type ScheduledJob, Scheduler } from './scheduler.ts';

const INTERVAL_MS = 10 * 60 * 1000;
const LEASE_MS = 60_000;

/** A job whose batches the test releases one by one, counting which node ran them. */
class GatedJob implements ScheduledJob {
  readonly intervalMs = INTERVAL_MS;
  readonly runs: string[] = [];
  private gates: Array<() => void> = [];
  /** Batches still to report `more`. */
  moreBatches = 0;

  constructor(readonly name: string) {}

  runBatch(): Promise<{ more: boolean }> {
    this.runs.push(currentNode);
    const more = this.moreBatches-- > 0;
    return new Promise((resolve) => this.gates.push(() => resolve({ more })));
  }

  /** Lets the batch in progress end. */
  release(): void {
    this.gates.shift()?.();
  }

  get waiting(): number {
    return this.gates.length;
  }
}

/** Which simulated node is calling (each scheduler below sets it before it polls). */
let currentNode = '';

for (const database of TEST_DATABASES) {
  describe(`scheduled jobs: one node at a time, once per interval (${database})`, () => {
    let server: TestServer;
    let now = Date.parse('2026-11-27T08:00:00Z');
    const outcomes: Array<[string, JobOutcome]> = [];
    const node = () =>
      new Scheduler({
        db: server.ctx.store.db,
        logger: server.ctx.logger,
        clock: () => now,
        leaseMs: LEASE_MS,
        onRun: (job, outcome) => outcomes.push([job, outcome]),
      });
    before(async () => {
      server = await startTestServer({ database });
    });
    after(() => server.close());

    /** Waits (bounded) until `count` runs of `job` have started and wait at its gate. */
    const untilWaiting = (job: GatedJob, count: number) =>
      waitFor(`${count} run(s) of ${job.name} waiting at the gate`, () => job.waiting === count, 5_000, 5);

    it('runs a job on the node that claims it; another node polling meanwhile does not run it', async () => {
      const job = new GatedJob('test.one-at-a-time');
      const [a, b] = [node(), node()];
      a.add(job);
      b.add(job);
      currentNode = 'a';
      const runA = a.runIfDue(job);
      await untilWaiting(job, 1);
      currentNode = 'b';
      assert.equal(await b.runIfDue(job), false, 'b cannot claim while a runs');
      job.release();
      assert.equal(await runA, true);
      // Done: not due again before the interval, on any node.
      now += INTERVAL_MS - 1;
      assert.equal(await b.runIfDue(job), false, 'not due before its interval');
      now += 1;
      const runB = b.runIfDue(job);
      await untilWaiting(job, 1);
      job.release();
      assert.equal(await runB, true);
      assert.deepEqual(job.runs, ['a', 'b']);
    });

    it('runs batch after batch while work is left, renewing its lease, and a node that dies is replaced once its lease lapsed', async () => {
      const job = new GatedJob('test.batches');
      const [a, b] = [node(), node()];
      job.moreBatches = 2;
      currentNode = 'a';
      const runA = a.runIfDue(job);
      for (let batch = 0; batch < 3; batch++) {
        await untilWaiting(job, 1);
        now += LEASE_MS / 2;
        job.release();
      }
      await runA;
      assert.deepEqual(
        job.runs,
        ['a', 'a', 'a'],
        'three batches in one run; the lease was renewed between them',
      );

      // Node a claims the next run and dies in its first batch (its promise never settles).
      now += INTERVAL_MS;
      void a.runIfDue(job);
      await untilWaiting(job, 1);
      currentNode = 'b';
      now += LEASE_MS - 1;
      assert.equal(await b.runIfDue(job), false, 'the lease still holds');
      now += 2;
      const runB = b.runIfDue(job);
      await untilWaiting(job, 2);
      job.release(); // a's batch ends after all …
      job.release(); // … and b's
      await runB;
      assert.deepEqual(job.runs.slice(3), ['a', 'b']);
      const row = await server.ctx.store.db
        .selectFrom('scheduled_jobs')
        .selectAll()
        .where('name', '=', 'test.batches')
        .executeTakeFirstOrThrow();
      assert.equal(row.holder, null, 'released by b; a (lease lost) did not overwrite it');
      assert.equal(row.last_outcome, 'completed');
    });

    it('reports a failed batch and makes the job due again soon, on any node', async () => {
      const failing: ScheduledJob = {
        name: 'test.failing',
        intervalMs: INTERVAL_MS,
        runBatch: async () => {
          throw new Error('the store went away');
        },
      };
      const a = node();
      assert.equal(await a.runIfDue(failing), true);
      assert.deepEqual(outcomes.at(-1), ['test.failing', 'failed']);
      now += 30_000;
      assert.equal(
        await node().runIfDue(failing),
        true,
        'retried after a poll interval, not a whole interval',
      );
    });
  });
}
