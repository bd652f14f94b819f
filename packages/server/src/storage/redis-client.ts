import { Redis } from 'ioredis';

/**
 * A Redis connection for Parley's shared state (rate limits, reply turns). Commands fail fast instead of queueing
 * forever while Redis is down — every caller decides whether to fail open or closed — and connection errors surface
 * on those commands rather than being logged by ioredis itself.
 */
export function connectRedis(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, commandTimeout: 1000 });
  redis.on('error', () => {});
  return redis;
}
