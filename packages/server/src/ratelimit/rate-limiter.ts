/**
 * Rate limiting for abuse control, shared by every capability (token endpoint, webchat sessions, …).
 *
 * ## Model
 * A fixed window counter per key: a window of `rule.windowMs` milliseconds opens at the key's first counted hit,
 * every `hit` adds `cost` (default 1) to the key's count, and the count starts again at 0 with the first hit after
 * the window ended. Windows are exact and cheap (one small record per key). Because a window starts with the burst
 * that opens it (rather than at an epoch-aligned boundary), a burst cannot straddle two windows and spend twice the
 * limit. Denied hits are counted too, so `count` shows how hard a key is pushing (and keeps a hammering key blocked
 * until its window ends).
 *
 * ## API
 * ```ts
 *  * const limiter = ctx.rateLimiter;               // one per context: Redis when REDIS_URL is set, else memory
 * const rule = { limit: 30, windowMs: 60_000 };      // 30 per minute
 * const state = await limiter.hit(`webchat:session:${sessionId}`, rule);
 * if (!state.allowed) throw new TooManyRequestsError(state.retryAfterSeconds);
 * ```
 * - `hit(key, rule, cost?)` counts and answers `allowed = count <= limit` (the hit that reaches the limit is still
 *   allowed; the next one is not).
 * - `peek(key, rule)` counts nothing and answers whether one more hit would be allowed (`count < limit`). Use it
 *   for "refuse while blocked, count only failures" (e.g. failed logins): `peek` first, `hit` on failure.
 * - `reset(key)` forgets a key (e.g. after an operator unblocks it).
 * Keys are free-form; prefix them with your capability (`oauth:`, `webchat:`) so they never collide. The Redis
 * implementation adds `config.rateLimit.keyPrefix` in front and shares counts between all nodes; the memory one is
 * per process.
 *
 * Outages: `createRateLimiter` wraps the Redis implementation in `FallbackRateLimiter`, which counts in this process
 * (the same rules, per node) while Redis cannot answer within `SHARED_ANSWER_BUDGET_MS`, so callers never see a
 * Redis error and every limit keeps holding per node (docs/config.md "Rate limits while Redis is down"). Only a
 * nonsensical rule rejects (`RangeError`). `RedisRateLimiter` on its own rejects when Redis is unreachable.
 */
export interface RateLimitRule {
  /** Events allowed per window (≥ 1). */
  limit: number;
  /** Window length in milliseconds (≥ 1). */
  windowMs: number;
}

export interface RateLimitState {
  /** Events counted for the key in the current window, including this hit. */
  count: number;
  limit: number;
  /** `hit`: this hit is within the limit. `peek`: one more hit would be. */
  allowed: boolean;
  /** Hits left in this window (0 when exhausted). */
  remaining: number;
  /** Milliseconds until the current window ends and the count starts again. */
  resetMs: number;
  /** `resetMs` rounded up to whole seconds (≥ 1), ready for a `Retry-After` header (RFC 9110 §10.2.3). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Which implementation: `memory` (one process) or `redis` (shared by all nodes). */
  readonly kind: 'memory' | 'redis';
  hit(key: string, rule: RateLimitRule, cost?: number): Promise<RateLimitState>;
  peek(key: string, rule: RateLimitRule): Promise<RateLimitState>;
  reset(key: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * `hit` and `peek` over a fixed window per key, for both implementations: they only keep the count
 * (`countWindow`: add `cost` to the key's window, opening one of `windowMs` if none is open; 0 only reads).
 */
export abstract class FixedWindowRateLimiter implements RateLimiter {
  abstract readonly kind: RateLimiter['kind'];
  abstract reset(key: string): Promise<void>;
  abstract close(): Promise<void>;
  /** The key's count after adding `cost`, and the milliseconds until its window ends. */
  protected abstract countWindow(key: string, cost: number, windowMs: number): Promise<[number, number]>;

  async hit(key: string, rule: RateLimitRule, cost = 1): Promise<RateLimitState> {
    assertRule(rule, cost);
    const [count, resetMs] = await this.countWindow(key, cost, rule.windowMs);
    return stateOf(count, rule, resetMs, true);
  }

  async peek(key: string, rule: RateLimitRule): Promise<RateLimitState> {
    assertRule(rule, 0);
    const [count, resetMs] = await this.countWindow(key, 0, rule.windowMs);
    return stateOf(count, rule, resetMs, false);
  }
}

/** Builds the state both implementations answer, from a window count and the time left in the window. */
function stateOf(count: number, rule: RateLimitRule, resetMs: number, counted: boolean): RateLimitState {
  const allowed = counted ? count <= rule.limit : count < rule.limit;
  return {
    count,
    limit: rule.limit,
    allowed,
    remaining: Math.max(0, rule.limit - count),
    resetMs,
    retryAfterSeconds: Math.max(1, Math.ceil(resetMs / 1000)),
  };
}

function assertRule(rule: RateLimitRule, cost: number): void {
  if (!Number.isInteger(rule.limit) || rule.limit < 1)
    throw new RangeError('rate limit must be an integer ≥ 1');
  if (!Number.isInteger(rule.windowMs) || rule.windowMs < 1)
    throw new RangeError('window must be an integer ≥ 1 ms');
  if (!Number.isInteger(cost) || cost < 0) throw new RangeError('cost must be an integer ≥ 0');
}
