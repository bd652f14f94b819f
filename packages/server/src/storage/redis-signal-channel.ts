import { randomBytes } from 'node:crypto';
import { keepRedisAlive, type OutageAwareRedis } from '@parley/realtime';
import type { Redis } from 'ioredis';

/** A message on a signal channel: a JSON object; `node` is the sender's (added by `send`). */
export type SignalMessage = Record<string, unknown>;

/**
 * One Redis PUB/SUB channel the nodes of a cluster tell each other things on — hints that make something happen at
 * once which each node would otherwise notice later by itself (reply hand-overs: webchat/conversations/
 * reply-signals.ts; token revocations: packages/server/src/oauth/revocation-list.ts). Each message is a JSON object carrying the
 * sender's random `node` id, so a node never hears its own. `send` rejects while Redis is away: callers decide
 * whether that matters (a hint need not be retried).
 */
export class RedisSignalChannel {
  /** Names this node's messages, so its own coming back are ignored. */
  private readonly node = randomBytes(8).toString('base64url');
  private subscriber?: Redis;

  constructor(
    /** A command connection from `connectFailFastRedis` (packages/server/src/storage/redis-client.ts). */
    private readonly redis: OutageAwareRedis,
    private readonly options: {
      channel: string;
      /**
       * Connects the command connection on the first call (packages/server/src/storage/redis-client.ts
       * `failFastRedis`) and settles once that first attempt did: `listen` and `send` wait for it.
       */
      ready?: () => Promise<void>;
      /**
       * Told each time the channel is subscribed (the first time and after every reconnect) and each time the
       * subscription connection is lost: a listener whose state depends on hearing every message (a cache's
       * invalidations, packages/server/src/companies/company-cache.ts) starts over then, since PUB/SUB keeps nothing
       * for a subscriber that was away.
       */
      onSubscribed?: () => void;
      onLost?: () => void;
    },
  ) {}

  async send(message: SignalMessage): Promise<void> {
    await this.options.ready?.();
    await this.redis.publish(this.options.channel, JSON.stringify({ ...message, node: this.node }));
  }

  /** Calls `handle` with every well-formed message another node sends, until `close`. */
  async listen(handle: (message: SignalMessage) => void): Promise<void> {
    // The node starts the work that sends once this resolves: its first messages then find the connection made (a
    // fail-fast connection drops commands sent before it is).
    await this.options.ready?.();
    // A connection in subscriber mode can do nothing else: a duplicate of the command connection, with its outage
    // settings (packages/server/src/storage/redis-client.ts): commands are not queued while it is down, so ioredis' own resubscription
    // is not relied on — every time it is ready (the first connection, each reconnect) it subscribes again.
    const subscriber = this.redis.withSameSettings({ autoResubscribe: false });
    subscriber.on('error', () => {});
    this.subscriber = subscriber;
    subscriber.on('message', (_channel: string, raw: string) => {
      const message = parse(raw);
      if (message && message.node !== this.node) handle(message);
    });
    const subscribe = () =>
      subscriber.subscribe(this.options.channel).then(() => this.options.onSubscribed?.());
    subscriber.on('close', () => this.options.onLost?.());
    subscriber.on('ready', () => void subscribe().catch(() => {}));
    // PINGs while idle notice a connection that stopped answering (a partition), as for every Redis client.
    const stopKeepAlive = keepRedisAlive(subscriber);
    subscriber.once('end', stopKeepAlive);
    // Redis away at start-up: the 'ready' above subscribes once it is back.
    if (await connected(subscriber)) await subscribe().catch(() => {});
  }

  async close(): Promise<void> {
    await this.subscriber?.quit().catch(() => this.subscriber?.disconnect());
  }
}

/** Whether the connection is ready now or becomes so at its first attempt (a lazy one is connected here). */
function connected(redis: Redis): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  if (redis.status === 'wait')
    return redis.connect().then(
      () => true,
      () => false,
    );
  return new Promise((resolve) => {
    redis.once('ready', () => resolve(true));
    redis.once('error', () => resolve(false));
  });
}

function parse(raw: string): SignalMessage | undefined {
  try {
    const message: unknown = JSON.parse(raw);
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
    return typeof (message as SignalMessage).node === 'string' ? (message as SignalMessage) : undefined;
  } catch {
    return undefined;
  }
}
