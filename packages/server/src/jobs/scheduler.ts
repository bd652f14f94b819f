import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../storage/schema.ts';

/**
 * Background work that must run periodically somewhere in the cluster, but on one node at a time (the attachment
 * sweeper today; retention and erasure jobs can join it). A job does its work in small batches, so no run holds
 * the store for long and a node that dies mid-run leaves at most one batch undone.
 */
export interface ScheduledJob {
  /** Unique and stable: the job's row in `scheduled_jobs`. */
  readonly name: string;
  /** How long after a run ended the next one starts, on whichever node claims it. */
  readonly intervalMs: number;
  /** One batch of work at `now` (the scheduler's clock); `more` when work is left for another batch. */
  runBatch(now: number): Promise<{ more: boolean }>;
}

export type JobOutcome = 'completed' | 'failed' | 'lease_lost';

export interface SchedulerOptions {
  db: Kysely<Database>;
  logger: Pick<Logger, 'warn' | 'info'>;
  /** Epoch milliseconds; tests inject theirs. */
  clock?: () => number;
  /** How long a claim on a run lasts unless renewed; it is renewed before each batch. */
  leaseMs?: number;
  /** How often each node looks for jobs that are due. */
  pollMs?: number;
  /** Batches in one run at most; a job with more left is due again at once (the next poll). */
  maxBatchesPerRun?: number;
  /** Told about every run this node made (metrics). */
  onRun?(job: string, outcome: JobOutcome): void;
}

const DEFAULTS = { leaseMs: 60_000, pollMs: 30_000, maxBatchesPerRun: 20 };

/**
 * Runs scheduled jobs, each on one node at a time, once per interval for the whole cluster (docs/architecture.md
 * "Scheduled jobs"). Every node polls; a run starts by claiming the job's row in `scheduled_jobs` — one conditional
 * upsert that succeeds only when the job is due (`next_run_ms`) and nobody holds an unexpired lease — so SQLite and
 * PostgreSQL need no advisory lock. Between batches the runner renews its lease (a runner that lost it stops); at
 * the end it releases the row and names the next run. A node that dies mid-run holds the job until its lease
 * lapses; then another node runs it. Leases compare the nodes' clocks: jobs must be idempotent (each batch's deletes
 * re-check their conditions), so clocks that disagree by more than a lease only cost duplicate work.
 */
export class Scheduler {
  private readonly jobs = new Map<string, ScheduledJob>();
  /** This process, as the holder of the rows it claims. */
  private readonly holder = randomBytes(9).toString('base64url');
  private readonly clock: () => number;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly maxBatchesPerRun: number;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: SchedulerOptions) {
    this.clock = options.clock ?? Date.now;
    this.leaseMs = options.leaseMs ?? DEFAULTS.leaseMs;
    this.pollMs = options.pollMs ?? DEFAULTS.pollMs;
    this.maxBatchesPerRun = options.maxBatchesPerRun ?? DEFAULTS.maxBatchesPerRun;
  }

  add(job: ScheduledJob): void {
    if (this.jobs.has(job.name)) throw new Error(`a job named ${job.name} is already scheduled`);
    this.jobs.set(job.name, job);
  }

  /** Polls every `pollMs` (the first time at once) until `stop`. */
  start(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => void this.tick(), this.pollMs);
    this.timer.unref();
    void this.tick();
  }

  /** Stops polling and waits for a run in progress to end its batch. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
  }

  /** Runs every due job this node can claim, one after the other; resolves when they ended. */
  tick(): Promise<void> {
    this.ticking ??= (async () => {
      try {
        for (const job of this.jobs.values()) if (!this.stopped) await this.runIfDue(job);
      } finally {
        this.ticking = undefined;
      }
    })();
    return this.ticking;
  }

  /** Claims `job` when it is due and free, runs it in batches and releases it; false when not claimed. */
  async runIfDue(job: ScheduledJob): Promise<boolean> {
    let claimed: boolean;
    try {
      claimed = await this.claim(job.name);
    } catch (err) {
      this.options.logger.warn(
        { err: { message: (err as Error).message }, job: job.name },
        'job not claimed',
      );
      return false;
    }
    if (!claimed) return false;
    let outcome: JobOutcome = 'completed';
    let more = false;
    try {
      for (let batch = 0; batch < this.maxBatchesPerRun; batch++) {
        if (batch > 0 && !(await this.renew(job.name))) {
          outcome = 'lease_lost';
          break;
        }
        more = (await job.runBatch(this.clock())).more;
        if (!more || this.stopped) break;
      }
    } catch (err) {
      outcome = 'failed';
      this.options.logger.warn({ err: { message: (err as Error).message }, job: job.name }, 'job run failed');
    }
    if (outcome !== 'lease_lost') await this.release(job, outcome, more).catch(() => undefined);
    this.options.onRun?.(job.name, outcome);
    return true;
  }

  private async claim(name: string): Promise<boolean> {
    const now = this.clock();
    const row = await this.options.db
      .insertInto('scheduled_jobs')
      .values({ name, holder: this.holder, lease_until_ms: now + this.leaseMs, next_run_ms: now })
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet({ holder: this.holder, lease_until_ms: now + this.leaseMs })
          .where('scheduled_jobs.next_run_ms', '<=', now)
          .where('scheduled_jobs.lease_until_ms', '<=', now),
      )
      .returning('holder')
      .executeTakeFirst();
    return row?.holder === this.holder;
  }

  private async renew(name: string): Promise<boolean> {
    const result = await this.options.db
      .updateTable('scheduled_jobs')
      .set({ lease_until_ms: this.clock() + this.leaseMs })
      .where('name', '=', name)
      .where('holder', '=', this.holder)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  private async release(job: ScheduledJob, outcome: JobOutcome, more: boolean): Promise<void> {
    const now = this.clock();
    // Work left over (or a failure, soon retried by whichever node polls next): due again at the next poll.
    const next =
      now + (outcome === 'completed' && !more ? job.intervalMs : Math.min(job.intervalMs, this.pollMs));
    await this.options.db
      .updateTable('scheduled_jobs')
      .set({ holder: null, lease_until_ms: 0, next_run_ms: next, last_run_ms: now, last_outcome: outcome })
      .where('name', '=', job.name)
      .where('holder', '=', this.holder)
      .execute();
  }
}
