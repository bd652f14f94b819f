import type { Logger } from 'pino';
import { MemoryRateLimiter } from './memory-rate-limiter.ts';
import type { RateLimiter, RateLimitRule, RateLimitState } from './rate-limiter.ts';
import type { RedisRateLimiter } from './redis-rate-limiter.ts';

/**
 * How long a limit check waits for Redis before it counts in this process instead. A check sits in front of
 * requests that have their own answer-time contract (a realtime publish is answered within 2 s, after a broker
 * publish that may itself wait up to 1 s for a Redis that has just gone silent; README "Redis outages" of
 * packages/realtime); Redis answers in well under a millisecond when it is there at all.
 */
export const SHARED_ANSWER_BUDGET_MS = 500;

export interface FallbackRateLimiterOptions {
  /**
   * Connects the shared counts' connection on the first call (packages/server/src/storage/redis-client.ts
   * `failFastRedis`) and settles once that first attempt did: checks wait for it rather than fall back.
   */
  ready?: () => Promise<void>;
  /** How long a check waits for Redis before counting here (default `SHARED_ANSWER_BUDGET_MS`). */
  answerWithinMs?: number;
  logger?: Pick<Logger, 'warn' | 'info'>;
  /** The per-node counts' clock (tests move it); the shared counts run on Redis's own. */
  clock?: () => number;
}

/**
 * The rate limiter of a cluster (`REDIS_URL`): counts in Redis, shared by every node, while Redis answers; counts
 * in this process, with the same rules, while it does not — down, restarting, partitioned away, or slower than
 * `answerWithinMs`. So every limit holds per node during an outage (a cluster of N nodes lets at most N times a
 * limit through) instead of not holding at all, and no check ever waits for Redis longer than the budget. It goes
 * back to the shared counts as soon as the connection is ready again; what was counted here meanwhile expires with
 * its window. One mechanism for every limiter (token endpoint, portal sign-in, webchat), docs/config.md.
 */
export class FallbackRateLimiter implements RateLimiter {
  readonly kind = 'redis';
  private readonly local: MemoryRateLimiter;
  private readonly answerWithinMs: number;
  private countingLocally = false;

  constructor(
    private readonly shared: RedisRateLimiter,
    private readonly options: FallbackRateLimiterOptions = {},
  ) {
    this.answerWithinMs = options.answerWithinMs ?? SHARED_ANSWER_BUDGET_MS;
    this.local = new MemoryRateLimiter(undefined, options.clock);
  }

  hit(key: string, rule: RateLimitRule, cost?: number): Promise<RateLimitState> {
    return this.count((limiter) => limiter.hit(key, rule, cost));
  }

  peek(key: string, rule: RateLimitRule): Promise<RateLimitState> {
    return this.count((limiter) => limiter.peek(key, rule));
  }

  /** Forgets the key here and, when Redis answers, there too (a failed shared reset is logged, not thrown). */
  async reset(key: string): Promise<void> {
    await this.local.reset(key);
    await this.options.ready?.();
    if (!this.shared.connected()) return;
    await this.withinBudget(this.shared.reset(key)).catch((err: unknown) =>
      this.options.logger?.warn({ err: { message: (err as Error).message } }, 'rate limit reset not shared'),
    );
  }

  async close(): Promise<void> {
    await Promise.all([this.local.close(), this.shared.close()]);
  }

  private async count(check: (limiter: RateLimiter) => Promise<RateLimitState>): Promise<RateLimitState> {
    await this.options.ready?.();
    if (this.shared.connected()) {
      try {
        const state = await this.withinBudget(check(this.shared));
        this.countShared();
        return state;
      } catch (err) {
        // A bad rule is the caller's mistake, whichever limiter counts.
        if (err instanceof RangeError) throw err;
        this.countLocally((err as Error).message);
      }
    } else {
      this.countLocally('not connected');
    }
    return check(this.local);
  }

  private withinBudget<T>(operation: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        // One more turn for I/O first: after the event loop was busy for longer than the budget, the timer runs
        // before the answer already waiting in the socket is read, and would count a hit of a healthy Redis here.
        () => setImmediate(() => reject(new Error(`no answer within ${this.answerWithinMs} ms`))),
        this.answerWithinMs,
      );
    });
    return Promise.race([operation, deadline]).finally(() => clearTimeout(timer));
  }

  private countLocally(reason: string): void {
    if (this.countingLocally) return;
    this.countingLocally = true;
    this.options.logger?.warn(
      { reason },
      'rate limiter: Redis unavailable; counting per node until it answers again',
    );
  }

  private countShared(): void {
    if (!this.countingLocally) return;
    this.countingLocally = false;
    this.options.logger?.info({}, 'rate limiter: Redis answers again; counting shared');
  }
}
