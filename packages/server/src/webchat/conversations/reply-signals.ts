import { randomBytes } from 'node:crypto';
import { keepRedisAlive } from '@parley/realtime';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { errorField, ThrottledWarnings } from '../../logging/throttled-warnings.ts';

export type InterruptReason = 'handover' | 'closed';
const INTERRUPT_REASONS: readonly string[] = ['handover', 'closed'];

/** What one node tells the others about a conversation's replies. */
export type ReplySignal =
  | { kind: 'interrupt'; conversationId: string; reason: InterruptReason }
  /** The conversation's line has work that this node will not do (it is draining): take it now. */
  | { kind: 'wake'; conversationId: string };

/**
 * Tells the other nodes of a cluster about a conversation's replies: stop the one you stream (handover, close),
 * or take the line's next job now (a draining node hands it over). These are hints that make things happen at
 * once: ownership itself lives in the store (reply-queue.ts), and every node sweeps for stalled lines anyway, so a
 * signal lost while Redis is away only delays work by a sweep. One node alone needs none (`LOCAL_REPLY_SIGNALS`).
 */
export interface ReplySignals {
  send(signal: ReplySignal): Promise<void>;
  /** Calls `handle` for every signal another node sends, until `close`. */
  listen(handle: (signal: ReplySignal) => void): Promise<void>;
  close(): Promise<void>;
}

export const LOCAL_REPLY_SIGNALS: ReplySignals = {
  send: async () => {},
  listen: async () => {},
  close: async () => {},
};

/** Signals over one Redis PUB/SUB channel shared by the nodes of a cluster (same prefix). */
export class RedisReplySignals implements ReplySignals {
  /** Names this node's messages, so its own signals coming back are ignored. */
  private readonly node = randomBytes(8).toString('base64url');
  private subscriber?: Redis;
  private readonly warnings: ThrottledWarnings;

  constructor(
    private readonly redis: Redis,
    private readonly options: {
      prefix: string;
      logger: Logger;
      /** Settles once the command connection's first attempt did (storage/redis-client.ts): `listen` waits for it. */
      ready?: Promise<void>;
    },
  ) {
    this.warnings = new ThrottledWarnings(options.logger);
  }

  private get channel(): string {
    return `${this.options.prefix}reply-signals`;
  }

  async send(signal: ReplySignal): Promise<void> {
    const message = JSON.stringify({
      node: this.node,
      kind: signal.kind,
      conversation_id: signal.conversationId,
      ...(signal.kind === 'interrupt' ? { reason: signal.reason } : {}),
    });
    try {
      await this.redis.publish(this.channel, message);
    } catch (err) {
      // A hint, not a promise: the other nodes' sweeps and lease checks still get there. Throttled: while Redis is
      // away every close, handover and drain fails here (logging/throttled-warnings.ts).
      this.warnings.warn(
        { err: errorField(err), signal: signal.kind },
        'could not signal the other nodes (Redis); they will notice on their next sweep',
      );
    }
  }

  async listen(handle: (signal: ReplySignal) => void): Promise<void> {
    // The node starts its reply work once this resolves: its first signals and heartbeats then find the connection
    // made (a fail-fast connection drops commands sent before it is).
    await this.options.ready;
    // A connection in subscriber mode can do nothing else: a duplicate of the command connection, with its outage
    // settings (storage/redis-client.ts): commands are not queued while it is down, so ioredis' own resubscription
    // is not relied on — every time it is ready (the first connection, each reconnect) it subscribes again.
    const subscriber = this.redis.duplicate({ autoResubscribe: false });
    subscriber.on('error', () => {});
    this.subscriber = subscriber;
    subscriber.on('message', (_channel: string, raw: string) => {
      const signal = parseSignal(raw, this.node);
      if (signal) handle(signal);
    });
    const subscribe = () => subscriber.subscribe(this.channel);
    subscriber.on('ready', () => void subscribe().catch(() => {}));
    // PINGs while idle notice a connection that stopped answering (a partition), as for every Redis client.
    const stopKeepAlive = keepRedisAlive(subscriber);
    subscriber.once('end', stopKeepAlive);
    // Redis away at start-up: the signals are hints, the 'ready' above subscribes once it is back.
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

function parseSignal(raw: string, ownNode: string): ReplySignal | undefined {
  try {
    const event = JSON.parse(raw) as {
      node?: unknown;
      kind?: unknown;
      conversation_id?: unknown;
      reason?: unknown;
    };
    if (typeof event.node !== 'string' || event.node === ownNode) return undefined;
    if (typeof event.conversation_id !== 'string') return undefined;
    if (event.kind === 'wake') return { kind: 'wake', conversationId: event.conversation_id };
    if (
      event.kind === 'interrupt' &&
      typeof event.reason === 'string' &&
      INTERRUPT_REASONS.includes(event.reason)
    ) {
      return {
        kind: 'interrupt',
        conversationId: event.conversation_id,
        reason: event.reason as InterruptReason,
      };
    }
    return undefined;
  } catch {
    return undefined;
  }
}
