import type { Logger } from 'pino';
import { connectFailFastRedis } from '../storage/redis-client.ts';
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
 * otherwise.
 */
export function createRateLimiter(
  redisUrl: string | undefined,
  keyPrefix: string,
  logger?: Pick<Logger, 'warn' | 'info'>,
): RateLimiter {
  if (!redisUrl) return new MemoryRateLimiter();
  const { redis, ready } = connectFailFastRedis(redisUrl);
  return new FallbackRateLimiter(new RedisRateLimiter(redis, { keyPrefix, ownsConnection: true }), {
    ready,
    ...(logger ? { logger } : {}),
  });
}
