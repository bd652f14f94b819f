import { randomBytes } from 'node:crypto';
import { keepRedisAlive } from '@parley/realtime';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

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

  constructor(
    private readonly redis: Redis,
    private readonly options: { prefix: string; logger: Logger },
  ) {}

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
      // A hint, not a promise: the other nodes' sweeps and lease checks still get there.
      this.options.logger.warn(
        { err: { message: (err as Error).message }, signal: signal.kind },
        'could not signal the other nodes (Redis); they will notice on their next sweep',
      );
    }
  }

  async listen(handle: (signal: ReplySignal) => void): Promise<void> {
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
    if (
      await subscriber.connect().then(
        () => true,
        () => false,
      )
    )
      await subscribe().catch(() => {});
  }

  async close(): Promise<void> {
    await this.subscriber?.quit().catch(() => this.subscriber?.disconnect());
  }
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
