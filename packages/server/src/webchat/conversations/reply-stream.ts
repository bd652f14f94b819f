import { randomUUID } from 'node:crypto';
import type { InteractiveBlockInput } from '@parley/webchat-protocol';
import type { Logger } from 'pino';
import type { Block, ErrorBlock, MessageAuthor, MessageSnapshot } from '../messages/message.ts';
import type { AlsoInTransaction, MessageStore, NewMessage } from '../messages/message-store.ts';
import { announce, type Broadcaster, type PendingAnnouncements } from './broadcaster.ts';
import type { LiveSnapshots } from './live-snapshots.ts';

export interface ReplyStreamDeps {
  store: MessageStore;
  broadcaster: Broadcaster;
  /** Where the `complete` goes when the broker cannot take it now (announced again once it can). */
  announcements: PendingAnnouncements;
  live: LiveSnapshots;
  logger: Logger;
  /** Shortest time between two partial envelopes (coalescing). */
  flushIntervalMs: number;
  /** Shortest time between two database writes of the partial snapshot. */
  persistIntervalMs: number;
}

/**
 * How many sequences a stream reserves ahead in the database. It never publishes a sequence it has not reserved,
 * so whoever finishes the message after this node dies uses `reserved + 1` and is above everything published.
 * At most one extra write per this many partials (the once-a-second persist usually renews it first).
 */
export const RESERVED_SEQUENCES = 64;

/** The reservation stored with a new reply: its envelope 1 and the next RESERVED_SEQUENCES. */
const FIRST_RESERVATION = 1 + RESERVED_SEQUENCES;

/** A reply as first stored: partial, a typing block, its first sequences reserved (see ReplyStream). */
export function typingMessage(conversationId: string, author: MessageAuthor): NewMessage {
  return {
    conversationId,
    role: 'digital_employee',
    author,
    status: 'partial',
    blocks: [{ id: randomUUID(), type: 'typing', typing: true }],
    sequence: FIRST_RESERVATION,
  };
}

/**
 * One streamed message on its way out (docs/asyncapi.yaml "MessageEnvelope"): sequence 1 is a partial snapshot
 * with a typing block, then `replace` partials whose markdown grows — at most one per `flushIntervalMs`, however
 * fast the deltas come — and finally exactly one `complete`. Only the `complete` goes into channel history (one
 * history entry per message, so the channel's 100 entries are its last 100 messages); a client that subscribes
 * mid-stream gets the partial in the subscribe reply (webchat/realtime/in-flight.ts). Envelopes are published
 * strictly one after another, so their sequences arrive in order.
 *
 * Every write is conditional on the message still being partial: if another node completed it (this node lost
 * its lease, e.g. cut off from the store), the stream is `superseded`, publishes nothing more and calls
 * `onSuperseded` so the reply stops.
 */
export class ReplyStream {
  private sequence = 0;
  /** Highest sequence durably reserved (see RESERVED_SEQUENCES): nothing above it may be published. */
  private reserved = 0;
  private supersededFlag = false;
  private content = '';
  /** Quick replies and cards of this reply, shown after its markdown (docs/design.md "Interactive blocks"). */
  private offers: Block[] = [];
  private snapshot!: MessageSnapshot;
  private readonly markdownId = randomUUID();
  private lastFlushAt = 0;
  private lastPersistAt = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  private dirty = false;
  /** No more partials: complete() has been called. */
  private finished = false;
  /** The complete snapshot is stored: later complete() calls change nothing. */
  private completed = false;
  /** Serialises publications: each envelope waits for the previous one. */
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: ReplyStreamDeps,
    private readonly companyId: string,
    private readonly conversationId: string,
    private readonly author: MessageAuthor,
    private readonly onSuperseded: () => void = () => {},
  ) {}

  /** Another node completed this message: this stream publishes and writes nothing more. */
  get superseded(): boolean {
    return this.supersededFlag;
  }

  get messageId(): string {
    return this.snapshot.id;
  }

  /** Whether the reply holds anything to show: text, or interactive blocks. */
  get hasContent(): boolean {
    return this.content.length > 0 || this.offers.length > 0;
  }

  /**
   * Stores the message (status partial, a typing block; `also` joins the insert's transaction) and publishes
   * envelope 1 (see `begin`).
   */
  async start(also?: AlsoInTransaction): Promise<MessageSnapshot> {
    const { snapshot } = await this.deps.store.insertAt(
      typingMessage(this.conversationId, this.author),
      also,
    );
    return this.begin(snapshot);
  }

  /**
   * Publishes envelope 1 of a message already stored as `typingMessage` gave it (the engine stores it with the user
   * message it answers). A failed publication is as harmless as a lost partial: the reply goes on, so the stored
   * message still gets its `complete` rather than staying partial.
   */
  async begin(snapshot: MessageSnapshot): Promise<MessageSnapshot> {
    this.snapshot = snapshot;
    this.sequence = 1;
    this.reserved = FIRST_RESERVATION;
    this.deps.live.set(this.snapshot, this.sequence);
    this.lastFlushAt = Date.now();
    this.lastPersistAt = this.lastFlushAt;
    try {
      await announce(this.deps.broadcaster, this.companyId, this.snapshot, this.sequence);
    } catch (err) {
      this.deps.logger.warn({ err, messageId: this.snapshot.id }, 'could not publish the typing snapshot');
    }
    return this.snapshot;
  }

  /** Adds a delta; publishes now if the last partial is old enough, else at most one flush later. */
  append(delta: string): void {
    if (this.finished || delta.length === 0) return;
    this.content += delta;
    this.scheduleFlush();
  }

  /**
   * Adds interactive blocks (already validated) after the markdown; published with the next partial and the
   * `complete`. A failed reply drops them (complete with an error), so no offer outlives a broken answer.
   */
  offer(blocks: readonly InteractiveBlockInput[]): void {
    if (this.finished || blocks.length === 0) return;
    for (const block of blocks) this.offers.push({ id: randomUUID(), ...block });
    this.scheduleFlush();
  }

  /**
   * Publishes the final `complete` snapshot: the markdown so far, plus an error block when the reply failed.
   * Once one call has stored it, later calls change nothing. A call whose write failed throws, and the caller's
   * next call (the failure path, with its error block) tries again, so a database hiccup does not leave the
   * message partial until the abandoned-reply sweep.
   */
  async complete(error?: Omit<ErrorBlock, 'id' | 'type'>): Promise<MessageSnapshot> {
    if (this.completed || this.supersededFlag) return this.snapshot;
    this.finished = true;
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const blocks: Block[] = [];
    if (this.content.length > 0)
      blocks.push({ id: this.markdownId, type: 'markdown', content: this.content });
    if (error) blocks.push({ id: randomUUID(), type: 'error', code: error.code, message: error.message });
    else blocks.push(...this.offers);
    const snapshot: MessageSnapshot = {
      ...this.snapshot,
      status: 'complete',
      blocks,
      updated_at: new Date().toISOString(),
    };
    const sequence = ++this.sequence;
    this.snapshot = snapshot;
    // The completed message must be durable before anyone is told it is complete.
    const attempt = this.chain.then(async () => {
      const stored = await this.deps.store.complete(snapshot, sequence, this.companyId);
      this.completed = true;
      this.deps.live.delete(snapshot.id);
      if (!stored) {
        this.supersede();
        return;
      }
      await this.deps.announcements.announce(this.companyId, snapshot, sequence);
    });
    // A failed attempt must not block the next one behind a rejected chain.
    this.chain = attempt.catch(() => {});
    await attempt;
    return snapshot;
  }

  /** Resolves once every partial flushed so far has been stored and published, or given up on. */
  idle(): Promise<void> {
    return this.chain;
  }

  /** Publishes now if the last partial is old enough, else at most one flush later (coalescing). */
  private scheduleFlush(): void {
    this.dirty = true;
    const wait = this.lastFlushAt + this.deps.flushIntervalMs - Date.now();
    if (wait <= 0) this.flush();
    else this.flushTimer ??= setTimeout(() => this.flush(), wait);
  }

  private supersede(): void {
    if (this.supersededFlag) return;
    this.supersededFlag = true;
    this.finished = true;
    clearTimeout(this.flushTimer);
    this.deps.live.delete(this.snapshot.id);
    this.onSuperseded();
  }

  private flush(): void {
    this.flushTimer = undefined;
    if (!this.dirty || this.finished) return;
    this.dirty = false;
    this.lastFlushAt = Date.now();
    const snapshot: MessageSnapshot = {
      ...this.snapshot,
      blocks: [
        ...(this.content.length > 0
          ? [{ id: this.markdownId, type: 'markdown' as const, content: this.content }]
          : []),
        ...this.offers,
      ],
      updated_at: new Date(this.lastFlushAt).toISOString(),
    };
    const sequence = ++this.sequence;
    this.snapshot = snapshot;
    this.deps.live.set(snapshot, sequence);
    // Persist on schedule, and always before publishing past the reservation: a sequence is only ever published
    // once the database holds a reservation at or above it.
    const persist =
      sequence > this.reserved || this.lastFlushAt - this.lastPersistAt >= this.deps.persistIntervalMs;
    if (persist) this.lastPersistAt = this.lastFlushAt;
    this.chain = this.chain
      .then(async () => {
        if (this.supersededFlag) return;
        if (persist) {
          const reserved = sequence + RESERVED_SEQUENCES;
          if (!(await this.deps.store.persistPartial(snapshot, reserved))) return this.supersede();
          this.reserved = Math.max(this.reserved, reserved);
        }
        if (sequence > this.reserved) return; // the reservation could not be written: skip this partial
        await announce(this.deps.broadcaster, this.companyId, snapshot, sequence);
      })
      .catch((err) => {
        // A lost partial is harmless (the next snapshot replaces it); the complete is what must arrive.
        this.deps.logger.warn({ err, messageId: snapshot.id }, 'could not publish a partial snapshot');
      });
  }
}
