import type { AppContext } from '../context.ts';
import { connectRedis } from '../storage/redis-client.ts';
import { MemoryRateLimiter } from './memory-rate-limiter.ts';
import type { RateLimiter } from './rate-limiter.ts';
import { RedisRateLimiter } from './redis-rate-limiter.ts';

export { MemoryRateLimiter } from './memory-rate-limiter.ts';
export type { RateLimiter, RateLimitRule, RateLimitState } from './rate-limiter.ts';
export { RedisRateLimiter } from './redis-rate-limiter.ts';

const limiters = new WeakMap<AppContext, RateLimiter>();

/**
 * The context's rate limiter, created on first use and closed with the context: Redis-backed (shared by all
 * nodes) when `REDIS_URL` is set, in memory otherwise. Every capability uses this one instance.
 */
export function rateLimiterFor(ctx: AppContext): RateLimiter {
  let limiter = limiters.get(ctx);
  if (!limiter) {
    limiter = createRateLimiter(ctx.config.redisUrl, ctx.config.rateLimit.keyPrefix);
    limiters.set(ctx, limiter);
    const created = limiter;
    ctx.onClose(() => created.close());
  }
  return limiter;
}

export function createRateLimiter(redisUrl: string | undefined, keyPrefix: string): RateLimiter {
  if (!redisUrl) return new MemoryRateLimiter();
  const redis = connectRedis(redisUrl);
  return new RedisRateLimiter(redis, { keyPrefix, ownsConnection: true });
}
