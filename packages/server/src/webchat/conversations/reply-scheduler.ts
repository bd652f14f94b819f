import type { Logger } from 'pino';
import { errorField, ThrottledWarnings } from '../../logging/throttled-warnings.ts';
import type { ReplyHeartbeats } from './reply-heartbeats.ts';
import type { ReplyJob, ReplyQueue } from './reply-queue.ts';
import type { ReplySignals } from './reply-signals.ts';

/** What running a job came to: `done` leaves the line; `unfinished` stays for a takeover once the lease lapses. */
export type JobOutcome = 'done' | 'unfinished';

export interface ReplySchedulerDeps {
  queue: ReplyQueue;
  signals: ReplySignals;
  /** Signs of life of running jobs outside the store (reply-heartbeats.ts). */
  heartbeats: ReplyHeartbeats;
  /** Runs one claimed job to its end. Throwing counts as `unfinished`. */
  run(job: ReplyJob): Promise<JobOutcome>;
  logger: Logger;
  /** The queue's lease: renewed (and a heartbeat sent) every third of it while this node runs jobs. */
  leaseMs: number;
  /** How often the line is swept for work nobody is doing (lapsed leases, stalled queued jobs). */
  sweepMs: number;
}

/**
 * Works the durable reply line (reply-queue.ts) on this node. `kick(conversation)` after a user message is stored
 * starts a loop that claims the conversation's jobs one after another until its line is empty or another node
 * holds it; `runClaimed(job)` does the same from a job claimed with its message (`hold` it first, so its lease is
 * renewed from the moment it is claimed). The node that finishes a reply thus also answers the messages that queued
 * behind it, whichever node stored them. While jobs run, their leases are renewed and heartbeats sent
 * (reply-heartbeats.ts: a lapsed lease whose job still beats is not taken over, its node is alive and waits for the
 * store); a sweep finds lines that nobody works on (a node died, or two nodes raced past each other) and kicks
 * them. `drain` stops taking work and tells the other nodes.
 */
export class ReplyScheduler {
  /** Conversations with a loop on this node. */
  private readonly loops = new Map<string, Promise<void>>();
  /** Kicked while their loop was running: look at the line once more before the loop ends. */
  private readonly kickedAgain = new Set<string>();
  /** Jobs being run by this node now: only these leases are renewed. */
  private readonly running = new Set<string>();
  private draining = false;
  private renewTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeping = false;
  private lastSweepError = 0;

  private readonly warnings: ThrottledWarnings;

  constructor(private readonly deps: ReplySchedulerDeps) {
    this.warnings = new ThrottledWarnings(deps.logger);
  }

  start(): void {
    this.renewTimer = setInterval(() => void this.renew(), Math.max(100, this.deps.leaseMs / 3));
    this.renewTimer.unref();
    this.sweepTimer = setInterval(() => void this.sweep(), this.deps.sweepMs);
    this.sweepTimer.unref();
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /** Works the conversation's line on this node, unless a loop already does or the node is draining. */
  kick(conversationId: string): void {
    if (this.draining) return;
    if (this.loops.has(conversationId)) {
      this.kickedAgain.add(conversationId);
      return;
    }
    this.startLoop(conversationId, () => this.work(conversationId));
  }

  private startLoop(conversationId: string, work: () => Promise<void>): void {
    const loop: Promise<void> = work()
      // Every line fails at once when the store goes away: one line per interval for all of them, without stacks.
      .catch((err) =>
        this.warnings.warn({ err: errorField(err), conversationId }, 'reply line could not be worked'),
      )
      .finally(() => {
        if (this.loops.get(conversationId) === loop) this.loops.delete(conversationId);
      });
    this.loops.set(conversationId, loop);
  }

  /**
   * Renews the lease of a job this node claimed as its message was stored, until it has run: the claim's lease runs
   * from its commit, and the message is announced before the job runs (a slow broker must not let it lapse).
   */
  hold(job: ReplyJob): void {
    this.running.add(job.messageId);
  }

  /**
   * Runs a job this node claimed as its message was stored (reply-queue.ts `enqueue`), then goes on with the
   * conversation's line like `kick`. A loop still ending here (its last job just left the line) goes first.
   */
  runClaimed(job: ReplyJob): void {
    this.hold(job);
    const conversationId = job.conversationId;
    const previous = this.loops.get(conversationId) ?? Promise.resolve();
    this.startLoop(conversationId, () => previous.then(() => this.work(conversationId, job)));
  }

  /** Sweeps once now (at start-up, and in tests). */
  async sweep(): Promise<void> {
    if (this.draining || this.sweeping) return;
    this.sweeping = true;
    try {
      for (const conversationId of await this.deps.queue.stalledConversations()) this.kick(conversationId);
    } catch (err) {
      this.warnThrottled(err, 'could not sweep the reply line');
    } finally {
      this.sweeping = false;
    }
  }

  /**
   * Stops taking work: lets the replies running here finish for up to `timeoutMs`, then calls `abortRunning`
   * (each of them ends with an error block) and waits for them; conversations left with work wake other nodes.
   */
  async drain(timeoutMs: number, abortRunning: () => void): Promise<void> {
    this.draining = true;
    clearInterval(this.sweepTimer);
    const settled = this.allLoopsSettled();
    const timer = new Promise<'timeout'>((resolve) => setTimeout(resolve, timeoutMs, 'timeout').unref());
    if ((await Promise.race([settled, timer])) === 'timeout') {
      abortRunning();
      await settled;
    }
    clearInterval(this.renewTimer);
  }

  /** Resolves once no loop runs here, including loops started meanwhile (a job claimed with its message). */
  private async allLoopsSettled(): Promise<void> {
    while (this.loops.size > 0) await Promise.allSettled([...this.loops.values()]);
  }

  /** Works the line from `first` (a job already claimed) or from its head, one job after another. */
  private async work(conversationId: string, first?: ReplyJob): Promise<void> {
    let next = first;
    let finished: ReplyJob | undefined;
    for (;;) {
      this.kickedAgain.delete(conversationId);
      // The job just done leaves the line in the transaction that claims the next one.
      const job = next ?? (await this.deps.queue.claimNext(conversationId, finished, this.ownerGone));
      next = undefined;
      finished = undefined;
      if (!job) {
        if (this.kickedAgain.has(conversationId) && !this.draining) continue;
        return;
      }
      // A job claimed with its message has its reply stored already: it runs even on a draining node (drain waits
      // for it), since only a job whose reply has not started can be given back.
      if (this.draining && job !== first) {
        await this.handOver(job);
        return;
      }
      if ((await this.runOne(job)) === 'unfinished') return;
      if (this.draining) {
        await this.finish(job);
        // More may wait in this line; another node takes it now rather than at its next sweep.
        await this.deps.signals.send({ kind: 'wake', conversationId });
        return;
      }
      finished = job;
    }
  }

  private async runOne(job: ReplyJob): Promise<JobOutcome> {
    this.running.add(job.messageId);
    try {
      return await this.deps.run(job).catch((err) => {
        // An unfinished job keeps its row; its lease is no longer renewed, so a sweep takes it over once it lapses.
        this.deps.logger.warn({ err, messageId: job.messageId }, 'reply job left for another node');
        return 'unfinished' as const;
      });
    } finally {
      this.running.delete(job.messageId);
    }
  }

  /**
   * A done job leaves the line. If the store fails now, its lease lapses and another node takes it over: one whose
   * reply was stored finds it complete; one that ended without a reply (handed over meanwhile, no digital employee)
   * runs again, which answers nothing new or posts its system notice a second time.
   */
  private async finish(job: ReplyJob): Promise<void> {
    await this.deps.queue.finish(job).catch((err) => {
      this.warnThrottled(err, 'could not finish a reply job; it will be taken over');
    });
  }

  private async handOver(job: ReplyJob): Promise<void> {
    await this.deps.queue.release(job).catch(() => {});
    await this.deps.signals.send({ kind: 'wake', conversationId: job.conversationId });
  }

  /**
   * Renews the leases of the jobs running here and beats for them in the broker, side by side: while the store is
   * away the renewals fail, and the heartbeats keep the other nodes from taking over replies still streaming here.
   */
  private async renew(): Promise<void> {
    if (this.running.size === 0) return;
    const running = [...this.running];
    const [leases, beats] = await Promise.allSettled([
      this.deps.queue.renewLeases(running),
      this.deps.heartbeats.beat(running),
    ]);
    if (leases.status === 'rejected') this.warnThrottled(leases.reason, 'could not renew reply leases');
    if (beats.status === 'rejected') this.warnThrottled(beats.reason, 'could not send reply heartbeats');
  }

  /** A lapsed job may be taken over once its node has stopped beating too (reply-heartbeats.ts). */
  private readonly ownerGone = async (job: ReplyJob): Promise<boolean> =>
    !(await this.deps.heartbeats.beating(job.messageId));

  /** Store outages make these fail every few seconds; one warning per 30 s says enough. */
  private warnThrottled(err: unknown, message: string): void {
    const now = Date.now();
    if (now - this.lastSweepError < 30_000) return;
    this.lastSweepError = now;
    this.deps.logger.warn({ err: { message: (err as Error).message } }, message);
  }
}
