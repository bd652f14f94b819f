import type { Redis, RedisOptions } from 'ioredis';
import { BrokerError } from './errors.ts';

/** How long one Redis command may take before it fails with `broker_unavailable`. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 1_000;
/**
 * Reconnect attempts while Redis is away are at most this far apart (plus up to 100 ms of jitter): once the path is
 * back, a node is connected again within about this long, so what it could not deliver meanwhile reaches clients
 * within the 2 s the contract allows (README "Redis outages"). A refused or timed-out attempt costs next to nothing.
 */
export const MAX_RECONNECT_DELAY_MS = 500;
/** How often an idle connection is checked with a PING (`keepAlive`). */
export const DEFAULT_KEEP_ALIVE_MS = 1_000;

/**
 * ioredis options shared by every Redis connection of Parley (the broker's, presence, and the server's rate limits
 * and reply signals): how a Redis outage is handled (README "Redis outages"). ioredis' defaults queue commands
 * while disconnected and retry each one across 20 reconnects, so a publish would wait for Redis instead of
 * failing; here a command fails at once while Redis cannot be reached, and the connection keeps coming back by
 * itself.
 */
export function outageAwareOptions(commandTimeoutMs: number = DEFAULT_COMMAND_TIMEOUT_MS): RedisOptions {
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
    // ... and loses the connection: no byte for that long while a command waits, and ioredis drops the socket and
    // reconnects. Every later command then fails at once (not ready) instead of waiting out its own time-out one
    // after another, which is what made publishes queue up behind each other during a partition.
    socketTimeout: commandTimeoutMs,
    // A connect that hangs (packets dropped) is abandoned and tried again, so the first attempt after the path is
    // back gets through instead of waiting for the kernel's SYN retransmissions.
    connectTimeout: commandTimeoutMs,
    // Reconnect forever; the jitter keeps the nodes of a cluster from reconnecting in lockstep.
    retryStrategy: (attempt: number) =>
      Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS) + Math.floor(Math.random() * 100),
  };
}

/**
 * PINGs `redis` every `intervalMs` while it is ready, so a connection that stopped answering is noticed (the PING
 * times out and `socketTimeout` drops the socket) even when nothing else is sent on it: a PUB/SUB connection only
 * listens, and an idle node sends nothing. A dead connection that nobody writes to would otherwise look healthy
 * for as long as the partition lasts, and come back with whatever TCP still holds, seconds late. Returns a stop.
 */
export function keepAlive(redis: Redis, intervalMs: number = DEFAULT_KEEP_ALIVE_MS): () => void {
  const timer = setInterval(() => {
    if (redis.status === 'ready') redis.ping().catch(() => {});
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
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
