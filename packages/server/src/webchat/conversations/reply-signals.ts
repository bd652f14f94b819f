import type { OutageAwareRedis } from '@parley/realtime';
import type { Logger } from 'pino';
import { errorField, ThrottledWarnings } from '../../logging/throttled-warnings.ts';
import { RedisSignalChannel, type SignalMessage } from '../../storage/redis-signal-channel.ts';

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
  private readonly channel: RedisSignalChannel;
  private readonly warnings: ThrottledWarnings;

  constructor(
    redis: OutageAwareRedis,
    options: {
      prefix: string;
      logger: Logger;
      /** Connects the command connection, settling once its first attempt did: `listen` and `send` wait for it. */
      ready?: () => Promise<void>;
    },
  ) {
    this.channel = new RedisSignalChannel(redis, {
      channel: `${options.prefix}reply-signals`,
      ...(options.ready ? { ready: options.ready } : {}),
    });
    this.warnings = new ThrottledWarnings(options.logger);
  }

  async send(signal: ReplySignal): Promise<void> {
    const message = {
      kind: signal.kind,
      conversation_id: signal.conversationId,
      ...(signal.kind === 'interrupt' ? { reason: signal.reason } : {}),
    };
    try {
      await this.channel.send(message);
    } catch (err) {
      // A hint, not a promise: the other nodes' sweeps and lease checks still get there. Throttled: while Redis is
      // away every close, handover and drain fails here (logging/throttled-warnings.ts).
      this.warnings.warn(
        { err: errorField(err), signal: signal.kind },
        'could not signal the other nodes (Redis); they will notice on their next sweep',
      );
    }
  }

  listen(handle: (signal: ReplySignal) => void): Promise<void> {
    return this.channel.listen((message) => {
      const signal = parseSignal(message);
      if (signal) handle(signal);
    });
  }

  close(): Promise<void> {
    return this.channel.close();
  }
}

function parseSignal(event: SignalMessage): ReplySignal | undefined {
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
}
