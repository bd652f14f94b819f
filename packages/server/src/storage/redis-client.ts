import { keepRedisAlive, OutageAwareRedis } from '@parley/realtime';

/**
 * The one factory of the server's own Redis connections (rate limits, reply signals, heartbeats and shown texts):
 * a connection that never makes its caller wait for an outage, with the realtime broker's settings
 * (packages/realtime/README.md "Redis outages"): a command fails at once while Redis cannot be reached, a
 * connection that stops answering (a partition) is dropped within about a second — PINGed while idle, so it is
 * noticed even when nothing else is sent — and it is made again every half second or so until Redis is back. For
 * callers that have something to do meanwhile (rate limits count per node, ratelimit/fallback-rate-limiter.ts; a
 * reply's signal is a hint that the other nodes' sweeps make up for). Its `withSameSettings()` is another connection with the same settings.
 * `ready` settles once the first connection attempt did, whatever its outcome.
 */
export function connectFailFastRedis(url: string): { redis: OutageAwareRedis; ready: Promise<void> } {
  const redis = new OutageAwareRedis(url);
  redis.on('error', () => {});
  const stopKeepAlive = keepRedisAlive(redis);
  redis.once('end', stopKeepAlive);
  return { redis, ready: redis.connect().catch(() => undefined) };
}
