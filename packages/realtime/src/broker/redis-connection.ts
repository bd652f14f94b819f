import type { Redis, RedisOptions } from 'ioredis';
import { BrokerError } from './errors.ts';

/** How long one Redis command may take before it fails with `broker_unavailable`. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 1_000;
/** Reconnect attempts while Redis is away are at most this far apart (plus up to 100 ms of jitter). */
export const MAX_RECONNECT_DELAY_MS = 2_000;

/**
 * ioredis options shared by every connection of this package: how a Redis outage is handled (README "Redis
 * outages"). ioredis' defaults queue commands while disconnected and retry each one across 20 reconnects, so a
 * publish would wait for Redis instead of failing; here a command fails at once while Redis cannot be reached,
 * and the connection keeps coming back by itself.
 */
export function outageAwareOptions(commandTimeoutMs: number): RedisOptions {
  return {
    lazyConnect: true,
    // Disconnected (down, restarting, reconnecting): reject at once rather than queue until Redis returns.
    enableOfflineQueue: false,
    // Commands in flight when the connection drops fail right then, and are not sent again after the reconnect
    // (the caller was already told they failed).
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    // A Redis that keeps the connection open but does not answer (stopped, partitioned) fails commands as well.
    commandTimeout: commandTimeoutMs,
    // Reconnect forever; the jitter keeps the nodes of a cluster from reconnecting in lockstep.
    retryStrategy: (attempt: number) =>
      Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS) + Math.floor(Math.random() * 100),
  };
}

/**
 * Resolves once the connection is ready: connects a client that never connected (or was ended), or waits for the
 * attempt in progress. Rejects when that attempt fails; ioredis keeps reconnecting in the background.
 */
export function whenReady(redis: Redis): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  if (redis.status === 'wait' || redis.status === 'end') return redis.connect();
  return new Promise((resolve, reject) => {
    const onReady = (): void => {
      redis.off('close', onClose);
      resolve();
    };
    const onClose = (): void => {
      redis.off('ready', onReady);
      reject(new Error(`connection closed while ${redis.status}`));
    };
    redis.once('ready', onReady);
    redis.once('close', onClose);
  });
}

/** Fails a command before it is sent when the connection is not ready, with a message naming the state. */
export function assertConnected(redis: Redis): void {
  if (redis.status !== 'ready') {
    throw new BrokerError('broker_unavailable', `redis: not connected (${redis.status})`);
  }
}

/** Closes a connection: QUIT when connected, otherwise stop reconnecting at once. */
export async function quit(redis: Redis): Promise<void> {
  if (redis.status !== 'ready') {
    redis.disconnect();
    return;
  }
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}
