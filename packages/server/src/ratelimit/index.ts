import { connectRedis } from '../storage/redis-client.ts';
import { MemoryRateLimiter } from './memory-rate-limiter.ts';
import type { RateLimiter } from './rate-limiter.ts';
import { RedisRateLimiter } from './redis-rate-limiter.ts';

export { MemoryRateLimiter } from './memory-rate-limiter.ts';
export type { RateLimiter, RateLimitRule, RateLimitState } from './rate-limiter.ts';
export { RedisRateLimiter } from './redis-rate-limiter.ts';

/**
 * The process's rate limiter (the composition root builds one; every capability uses it): Redis-backed, shared by
 * all nodes, when `REDIS_URL` is set; in memory otherwise. `clock` is the memory limiter's (Redis counts on its own
 * clock, `TIME`).
 */
export function createRateLimiter(
  redisUrl: string | undefined,
  keyPrefix: string,
  clock: () => number = Date.now,
): RateLimiter {
  if (!redisUrl) return new MemoryRateLimiter(undefined, clock);
  const redis = connectRedis(redisUrl);
  return new RedisRateLimiter(redis, { keyPrefix, ownsConnection: true });
}
