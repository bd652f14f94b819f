import { TooManyRequestsError } from '../errors/app-error.ts';
import type { RateLimiter } from '../ratelimit/index.ts';

export interface LimitCheck {
  key: string;
  limit: number;
  /** The counting window; a minute unless said otherwise. */
  windowMs?: number;
}

const WINDOW_MS = 60_000;

/**
 * The webchat's abuse limits (conversations created, messages sent; per session and per IP) on the shared rate
 * limiter: Redis-backed and shared by all nodes when REDIS_URL is set, per node while Redis is down
 * (docs/config.md "Webchat").
 */
export class AbuseLimits {
  constructor(private readonly limiter: RateLimiter) {}

  /**
   * Counts one event on every key; the seconds to wait when any is over its limit, `undefined` when allowed. While
   * Redis is down the limits hold per node (ratelimit/fallback-rate-limiter.ts): no outage reaches this code.
   */
  async check(checks: LimitCheck[]): Promise<number | undefined> {
    const states = await Promise.all(
      checks.map((c) =>
        this.limiter.hit(`webchat:${c.key}`, { limit: c.limit, windowMs: c.windowMs ?? WINDOW_MS }),
      ),
    );
    const denied = states.filter((s) => !s.allowed);
    return denied.length === 0 ? undefined : Math.max(1, ...denied.map((s) => s.retryAfterSeconds));
  }

  /** Like `check`, throwing the 429 problem with Retry-After (RFC 6585 §4). */
  async enforce(checks: LimitCheck[], what: string): Promise<void> {
    const retryAfter = await this.check(checks);
    if (retryAfter !== undefined)
      throw new TooManyRequestsError(retryAfter, `Too many ${what}; retry in ${retryAfter} s.`);
  }
}
