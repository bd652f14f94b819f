import { keepRedisAlive, outageAwareRedisOptions } from '@parley/realtime';
import { Redis } from 'ioredis';

/**
 * A Redis connection for Parley's shared state (reply signals). Commands fail fast instead of queueing forever
 * while Redis is down — every caller decides whether to fail open or closed — and connection errors surface on
 * those commands rather than being logged by ioredis itself.
 */
export function connectRedis(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, commandTimeout: 1000 });
  redis.on('error', () => {});
  return redis;
}

/**
 * A Redis connection that never makes its caller wait for an outage, with the realtime broker's settings
 * (packages/realtime/README.md "Redis outages"): a command fails at once while Redis cannot be reached, a
 * connection that stops answering (a partition) is dropped within about a second — PINGed while idle, so it is
 * noticed even when nothing else is sent — and it is made again every half second or so until Redis is back. For
 * callers that have something to do meanwhile (rate limits count per node, ratelimit/fallback-rate-limiter.ts).
 * `ready` settles once the first connection attempt did, whatever its outcome.
 */
export function connectFailFastRedis(url: string): { redis: Redis; ready: Promise<void> } {
  const redis = new Redis(url, outageAwareRedisOptions());
  redis.on('error', () => {});
  const stopKeepAlive = keepRedisAlive(redis);
  redis.once('end', stopKeepAlive);
  return { redis, ready: redis.connect().catch(() => undefined) };
}
