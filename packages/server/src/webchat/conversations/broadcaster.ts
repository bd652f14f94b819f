import { channelOf, envelopeOf, type MessageEnvelope, type MessageSnapshot } from '@parley/webchat-protocol';
import type { Logger } from 'pino';
import { dependencyUnavailable } from '../../errors/unavailable.ts';

/**
 * Publishes envelopes on conversation channels. `history: false` keeps a publication out of the channel's
 * 100-entry history: only `complete` envelopes go there, one per message, so the history holds the channel's last
 * 100 messages. `idempotencyKey` makes a repeated publication a no-op within the broker's idempotency window.
 */
export interface Broadcaster {
  publish(
    channel: string,
    envelope: MessageEnvelope,
    options: { history: boolean; idempotencyKey?: string },
  ): Promise<void>;
}

/**
 * Publishes one envelope of `snapshot`. A `complete` goes into history under the idempotency key
 * `{message id}:{sequence}`, so announcing it again (a client's retry, `PendingAnnouncements`) never adds a
 * second history entry or a second delivery.
 */
export function announce(
  broadcaster: Broadcaster,
  companyId: string,
  snapshot: MessageSnapshot,
  sequence: number,
): Promise<void> {
  const complete = snapshot.status === 'complete';
  return broadcaster.publish(channelOf(companyId, snapshot.conversation_id), envelopeOf(snapshot, sequence), {
    history: complete,
    ...(complete ? { idempotencyKey: `${snapshot.id}:${sequence}` } : {}),
  });
}

/** Completes kept for a broker that cannot take them, per node; beyond either bound the oldest are given up. */
export const MAX_PENDING_ANNOUNCEMENTS = { messages: 10_000, bytes: 32 * 1024 * 1024 };
/** While some are kept, how often they are tried again when no "broker restored" arrives first. */
const RETRY_EVERY_MS = 1_000;
/** Kept announcements sent together when the broker is back (see `flush`). */
const FLUSH_BATCH = 256;

interface PendingAnnouncement {
  companyId: string;
  snapshot: MessageSnapshot;
  sequence: number;
  /** Size of the snapshot as JSON: what keeping it costs. */
  bytes?: number;
}

/**
 * Announces stored `complete` messages, and keeps those the broker cannot take now (down, partitioned away) to
 * announce them again as soon as it can: at once when the realtime engine says the broker is back
 * (`announceAgain`, called from the `onBrokerRestored` hook), else on a one-second retry. The messages are
 * durable; clients that follow them must see them complete rather than stay on a partial, and within moments of
 * the broker's return (docs/architecture.md "Broker outages"). Kept in the order they were first kept, one entry
 * per message (a later sequence replaces an earlier one in its place), at most `MAX_PENDING_ANNOUNCEMENTS` per
 * node (10,000 messages, 32 MiB): clients get anything given up when they next load the conversation over REST.
 */
export class PendingAnnouncements {
  private readonly pending = new Map<string, PendingAnnouncement>();
  private keptBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private flushAgain = false;
  private closed = false;

  constructor(
    private readonly broadcaster: Broadcaster,
    private readonly logger: Logger,
    private readonly bounds = MAX_PENDING_ANNOUNCEMENTS,
  ) {}

  /** Messages waiting for the broker. */
  get size(): number {
    return this.pending.size;
  }

  /**
   * Announces `snapshot` now; when the broker cannot take it, keeps it for later. Resolves after the first attempt
   * either way (callers never wait for an outage to end) unless `rethrow`: then an outage still rejects, for a
   * caller that must say so (a visitor's publish is answered 503 and retried; the message still reaches the
   * conversation's other clients once the broker is back, whether or not the visitor retries).
   */
  async announce(
    companyId: string,
    snapshot: MessageSnapshot,
    sequence: number,
    options: { rethrow?: boolean } = {},
  ): Promise<void> {
    try {
      await announce(this.broadcaster, companyId, snapshot, sequence);
      // An older sequence of it kept from before is not worth announcing any more.
      if ((this.pending.get(snapshot.id)?.sequence ?? Number.POSITIVE_INFINITY) <= sequence)
        this.forget(snapshot.id, true);
    } catch (err) {
      if (this.isOutage(err, snapshot.id)) {
        this.logger.warn(
          { err: { message: (err as Error).message }, messageId: snapshot.id },
          'announce failed; kept until the broker is back',
        );
        this.keep({ companyId, snapshot, sequence });
      }
      if (options.rethrow) throw err;
    }
  }

  /** Announces everything kept, oldest first, stopping at the first failure (the broker is not back yet). */
  announceAgain(): Promise<void> {
    if (this.flushing) {
      this.flushAgain = true;
      return this.flushing;
    }
    this.flushing = this.flush().finally(() => {
      this.flushing = undefined;
      if (this.flushAgain) {
        this.flushAgain = false;
        void this.announceAgain();
      } else this.scheduleRetry();
    });
    return this.flushing;
  }

  /** Stops retrying (shutdown); what is kept is left to the clients' next load. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private keep(entry: PendingAnnouncement): void {
    if ((this.pending.get(entry.snapshot.id)?.sequence ?? 0) > entry.sequence) return;
    entry.bytes = Buffer.byteLength(JSON.stringify(entry.snapshot));
    // A message kept already keeps its place (a Map keeps the order of first insertion): a visitor retrying its
    // refused message must not move it behind the reply to it.
    this.forget(entry.snapshot.id);
    this.pending.set(entry.snapshot.id, entry);
    this.keptBytes += entry.bytes;
    while (this.pending.size > this.bounds.messages || this.keptBytes > this.bounds.bytes) {
      const oldest = this.pending.keys().next().value as string;
      this.forget(oldest, true);
      this.logger.warn(
        { messageId: oldest, kept: this.pending.size },
        'gave up announcing a stored message; clients see it on their next load',
      );
    }
    this.scheduleRetry();
  }

  /** Drops `id`'s entry from the byte count, and with `remove` from the map (else its place stays for a new one). */
  private forget(id: string, remove = false): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.keptBytes -= entry.bytes ?? 0;
    if (remove) this.pending.delete(id);
  }

  /**
   * Announces what is kept, oldest first, a batch at a time: the publishes of a batch are sent together and reach
   * Redis in this order on one pipelined connection, so a backlog goes out in a few round trips instead of one per
   * message. Stops after a batch in which the broker was still away.
   */
  private async flush(): Promise<void> {
    while (this.pending.size > 0) {
      const batch = [...this.pending].slice(0, FLUSH_BATCH);
      const outcomes = await Promise.all(
        batch.map(([id, entry]) =>
          announce(this.broadcaster, entry.companyId, entry.snapshot, entry.sequence).then(
            () => 'sent' as const,
            (err: unknown) => (this.isOutage(err, id) ? ('kept' as const) : ('dropped' as const)),
          ),
        ),
      );
      batch.forEach(([id, entry], i) => {
        // A later sequence of the same message may have replaced it while it was being announced.
        if (outcomes[i] !== 'kept' && this.pending.get(id) === entry) this.forget(id, true);
      });
      if (outcomes.includes('kept')) return;
    }
  }

  /** An outage is waited out; anything else would fail again (and hold up the others): logged and dropped. */
  private isOutage(err: unknown, messageId: string): boolean {
    if (dependencyUnavailable(err) !== undefined) return true;
    this.logger.error({ err, messageId }, 'could not announce a stored message');
    return false;
  }

  private scheduleRetry(): void {
    if (this.closed || this.timer !== undefined || this.pending.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.announceAgain();
    }, RETRY_EVERY_MS);
    this.timer.unref();
  }
}
