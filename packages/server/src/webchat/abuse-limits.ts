import { TooManyRequestsError } from '../errors/app-error.ts';
import type { RateLimiter, RateLimitState } from '../ratelimit/index.ts';

export interface LimitCheck {
  key: string;
  limit: number;
  /** The counting window; a minute unless said otherwise. */
  windowMs?: number;
}

const WINDOW_MS = 60_000;

/**
 * The webchat's abuse limits (conversations created, messages sent, uploads and their bytes; per session and per IP)
 * on the shared rate limiter: Redis-backed and shared by all nodes when REDIS_URL is set, per node while Redis is
 * down (docs/config.md "Webchat").
 */
export class AbuseLimits {
  constructor(private readonly limiter: RateLimiter) {}

  /**
   * Counts `cost` (one event by default; bytes for upload quotas) on every key; the seconds to wait when any is over
   * its limit, `undefined` when allowed. While Redis is down the limits hold per node
   * (ratelimit/fallback-rate-limiter.ts): no outage reaches this code.
   */
  async check(checks: LimitCheck[], cost = 1): Promise<number | undefined> {
    const states = await Promise.all(
      checks.map((c) =>
        this.limiter.hit(`webchat:${c.key}`, { limit: c.limit, windowMs: c.windowMs ?? WINDOW_MS }, cost),
      ),
    );
    const denied = states.filter((s) => !s.allowed);
    return denied.length === 0 ? undefined : Math.max(1, ...denied.map((s) => s.retryAfterSeconds));
  }

  /** Like `check`, throwing the 429 problem with Retry-After (RFC 6585 §4). */
  async enforce(checks: LimitCheck[], what: string, cost = 1): Promise<void> {
    const retryAfter = await this.check(checks, cost);
    if (retryAfter !== undefined)
      throw new TooManyRequestsError(retryAfter, `Too many ${what}; retry in ${retryAfter} s.`);
  }

  /**
   * Counts nothing: throws the 429 problem when `cost` more would not fit within every key's limit (a key already
   * at its limit has no room for anything).
   */
  async enforceRoom(checks: LimitCheck[], what: string, cost = 1): Promise<void> {
    const states: RateLimitState[] = await Promise.all(
      checks.map((c) =>
        this.limiter.peek(`webchat:${c.key}`, { limit: c.limit, windowMs: c.windowMs ?? WINDOW_MS }),
      ),
    );
    const full = states.filter((s) => s.remaining < Math.max(1, cost));
    if (full.length === 0) return;
    const retryAfter = Math.max(1, ...full.map((s) => s.retryAfterSeconds));
    throw new TooManyRequestsError(retryAfter, `Too many ${what}; retry in ${retryAfter} s.`);
  }
}
