import type { Logger } from 'pino';
import { failFastRedis } from '../storage/redis-client.ts';
import { FallbackRateLimiter } from './fallback-rate-limiter.ts';
import { MemoryRateLimiter } from './memory-rate-limiter.ts';
import type { RateLimiter } from './rate-limiter.ts';
import { RedisRateLimiter } from './redis-rate-limiter.ts';

export { FallbackRateLimiter, SHARED_ANSWER_BUDGET_MS } from './fallback-rate-limiter.ts';
export { MemoryRateLimiter } from './memory-rate-limiter.ts';
export type { RateLimiter, RateLimitRule, RateLimitState } from './rate-limiter.ts';
export { RedisRateLimiter } from './redis-rate-limiter.ts';

/**
 * The process's rate limiter (the composition root builds one; every capability uses it): Redis-backed, shared by
 * all nodes, when `REDIS_URL` is set — counting per node while Redis cannot answer (FallbackRateLimiter); in memory
 * otherwise. `clock` is the memory counts' (Redis counts on its own clock, `TIME`).
 */
export function createRateLimiter(
  redisUrl: string | undefined,
  keyPrefix: string,
  options: { logger?: Pick<Logger, 'warn' | 'info'>; clock?: () => number } = {},
): RateLimiter {
  const clock = options.clock ?? Date.now;
  if (!redisUrl) return new MemoryRateLimiter(undefined, clock);
  // Connected by the first check, not here: building the context starts nothing.
  const { redis, connect } = failFastRedis(redisUrl);
  return new FallbackRateLimiter(new RedisRateLimiter(redis, { keyPrefix, ownsConnection: true }), {
    ready: connect,
    ...(options.logger ? { logger: options.logger } : {}),
    clock,
  });
}
