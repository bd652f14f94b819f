import { keepRedisAlive, OutageAwareRedis } from '@parley/realtime';
import type { Redis } from 'ioredis';

/**
 * The one factory of the server's own Redis connections (rate limits, reply signals, heartbeats and shown texts):
 * a connection that never makes its caller wait for an outage, with the realtime broker's settings
 * (packages/realtime/README.md "Redis outages"): a command fails at once while Redis cannot be reached, a
 * connection that stops answering (a partition) is dropped within about a second — PINGed while idle, so it is
 * noticed even when nothing else is sent — and it is made again every half second or so until Redis is back. For
 * callers that have something to do meanwhile (rate limits count per node, ratelimit/fallback-rate-limiter.ts; a
 * reply's signal is a hint that the other nodes' sweeps make up for). Its `withSameSettings()` is another connection
 * with the same settings.
 * `ready` settles once the first connection attempt did, whatever its outcome.
 */
export function connectFailFastRedis(url: string): { redis: OutageAwareRedis; ready: Promise<void> } {
  const { redis, connect } = failFastRedis(url);
  return { redis, ready: connect() };
}

/** A fail-fast connection (as `connectFailFastRedis` makes) that is not connected yet. */
export interface FailFastRedis {
  redis: OutageAwareRedis;
  /**
   * Connects on the first call (later calls share it) and starts the idle PINGs; settles once that first attempt
   * did, whatever its outcome (ioredis keeps reconnecting after a failed one).
   */
  connect(): Promise<void>;
}

/**
 * The same connection, made but not connected: what the composition root builds (context.ts) so that building
 * starts nothing — no socket, no timer — until the first use or the server's start calls `connect`.
 */
export function failFastRedis(url: string): FailFastRedis {
  const redis = new OutageAwareRedis(url);
  redis.on('error', () => {});
  let connecting: Promise<void> | undefined;
  const connect = () => {
    if (connecting === undefined) {
      const stopKeepAlive = keepRedisAlive(redis);
      redis.once('end', stopKeepAlive);
      connecting = redis.connect().catch(() => undefined);
    }
    return connecting;
  };
  return { redis, connect };
}

/** Closes a connection; one never connected is only marked ended (QUIT would first connect to send it). */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'wait') redis.disconnect();
  else await redis.quit().catch(() => redis.disconnect());
}
