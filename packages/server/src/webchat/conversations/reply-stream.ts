import { randomUUID } from 'node:crypto';
import type { ReplyBlockInput } from '@parley/webchat-protocol';
import type { Logger } from 'pino';
import { errorField, ThrottledWarnings } from '../../logging/throttled-warnings.ts';
import { isStoreUnavailable } from '../../storage/store-errors.ts';
import { untilStoreAnswers } from '../../storage/store-retry.ts';
import type { Block, ErrorBlock, MessageAuthor, MessageSnapshot } from '../messages/message.ts';
import type { AlsoInTransaction, MessageStore, NewMessage } from '../messages/message-store.ts';
import { announce, type Broadcaster, type PendingAnnouncements } from './broadcaster.ts';
import type { LiveSnapshots } from './live-snapshots.ts';
import { markdownText, NO_SHOWN_TEXTS, type ShownTexts } from './shown-texts.ts';

export interface ReplyStreamDeps {
  store: MessageStore;
  broadcaster: Broadcaster;
  /** Where the `complete` goes when the broker cannot take it now (announced again once it can). */
  announcements: PendingAnnouncements;
  live: LiveSnapshots;
  /** Where each partial's text is recorded before any client sees it (shown-texts.ts); none on one node. */
  shown?: ShownTexts;
  logger: Logger;
  /**
   * Where the warnings that repeat through an outage go (one line per message per interval, across every reply of
   * the node); without it the stream throttles its own.
   */
  warnings?: ThrottledWarnings;
  /** Shortest time between two partial envelopes (coalescing). */
  flushIntervalMs: number;
  /**
   * While `busy()` says the node is saturated (visitor messages wait to be taken in), the shortest time between two
   * partials instead, and the first text waits for it after the typing envelope too: see `interval`.
   */
  busy?: { now(): boolean; flushIntervalMs: number };
  /** Shortest time between two database writes of the partial snapshot. */
  persistIntervalMs: number;
  /** How long the completion waits for a store that is away before the reply is left to a takeover. */
  storeWaitMs: number;
  /** Aborts when the node shuts down: stop waiting for the store. */
  shutdown?: AbortSignal;
}

/**
 * How many sequences a stream reserves ahead in the database whenever it writes its partial snapshot (every
 * `persistIntervalMs`, and before it publishes past its reservation while the store answers).
 */
export const RESERVED_SEQUENCES = 64;

/**
 * Sequences a stream may publish beyond its stored reservation while it cannot write a new one (the store is away):
 * a reply keeps streaming through an outage. At 25 partials a second this lasts over an hour, far beyond any reply;
 * past it the stream publishes no more partials, only its `complete`.
 */
export const OUTAGE_SEQUENCES = 100_000;

/**
 * The sequence of the `complete` that whoever finishes a message for a node that is gone writes: above every
 * sequence that node may have published, its reservation and the outage allowance included.
 */
export const sequenceAfter = (reservation: number): number => reservation + OUTAGE_SEQUENCES + 1;

/** The reservation stored with a new reply: its envelope 1 and the next RESERVED_SEQUENCES. */
const FIRST_RESERVATION = 1 + RESERVED_SEQUENCES;

/** The stream gave up waiting for the store to take its completion: the reply is left to a takeover. */
export class ReplyNotStored extends Error {
  constructor(messageId: string, options: { cause: unknown }) {
    super(`reply ${messageId} could not be stored: the store was away too long`, options);
  }
}

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
 * with a typing block, then `replace` partials whose markdown grows — the first as soon as there is text, then at
 * most one per `flushIntervalMs`, however fast the deltas come, plus one with the text still waiting for its flush when the reply ends — and finally exactly
 * one `complete`; sequences count up by one. Only the `complete` goes into channel history (one
 * history entry per message, so the channel's 100 entries are its last 100 messages); a client that subscribes
 * mid-stream gets the partial in the subscribe reply (webchat/realtime/in-flight.ts). Envelopes are published
 * strictly one after another, so their sequences arrive in order.
 *
 * **Sequences.** The stored `sequence` of a streaming message is a reservation: while the store answers, nothing
 * above it is published (it is renewed first). Whoever finishes the message after this node is gone completes it at
 * `sequenceAfter(reservation)`, above the outage allowance too, so clients that follow the ordering rule accept it.
 *
 * **The store away.** Partial writes are best effort: one that fails is tried again on the next persist, and the
 * stream keeps publishing up to OUTAGE_SEQUENCES past its reservation, so the visitor keeps reading while the
 * database restarts. The completion, which must be stored before it is announced, waits for the store (retrying,
 * up to `storeWaitMs`); the last partial shows the whole text meanwhile. Memory per reply stays bounded whatever the
 * outage: the text, the one snapshot being written and the one waiting to be published — never a backlog.
 *
 * Every write is conditional on the message still being partial: if another node completed it (this node lost its
 * lease, e.g. cut off from the store and the broker), the stream is `superseded`, publishes nothing more and calls
 * `onSuperseded` so the reply stops.
 */
export class ReplyStream {
  /** The sequence of the newest envelope published (taken as each one goes out, so they count up by one). */
  private sequence = 0;
  /** Highest sequence durably reserved: nothing above it is published while the store answers. */
  private reserved = 0;
  /** The last partial write failed: publish within the outage allowance instead of waiting for a reservation. */
  private storeAway = false;
  private supersededFlag = false;
  /** Gave up waiting for the store (ReplyNotStored): publishes and writes nothing more. */
  private abandoned = false;
  private content = '';
  /** Quick replies and cards of this reply, shown after its markdown (docs/design.md "Interactive blocks"). */
  private offers: Block[] = [];
  /** What the employee is doing now (docs/design.md "Actions"), shown in partials only. */
  private statusBlock: Block | undefined;
  private snapshot!: MessageSnapshot;
  private readonly markdownId = randomUUID();
  private lastFlushAt = 0;
  /** When envelope 1 (typing) went out: while the node is busy the first text keeps an interval from it. */
  private typingAt = 0;
  private lastPersistAt = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  private dirty = false;
  /** No more partials: complete() has been called. */
  private finished = false;
  /** The complete snapshot is stored: later complete() calls change nothing. */
  private completed = false;
  /** The partial write in flight, if any (one at a time). */
  private persisting: Promise<void> | undefined;
  /** The newest partial not published yet; a newer one replaces it (coalescing when the broker is slow). */
  private unpublished: MessageSnapshot | undefined;
  /** Length of the markdown in the newest partial made: more text than that is waiting for the next flush. */
  private flushedLength = 0;
  /** The loop publishing partials, while it runs. */
  private publishing: Promise<void> | undefined;
  /** Serialises completions: a second complete() (the failure path) starts after the first settled. */
  private completing: Promise<unknown> = Promise.resolve();
  private readonly warnings: ThrottledWarnings;

  constructor(
    private readonly deps: ReplyStreamDeps,
    private readonly companyId: string,
    private readonly conversationId: string,
    private readonly author: MessageAuthor,
    private readonly onSuperseded: () => void = () => {},
  ) {
    this.warnings = deps.warnings ?? new ThrottledWarnings(deps.logger);
  }

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
    // The coalescing interval is between partials with text: the typing envelope does not hold the first words
    // back, so an answer known at once (the builtin's, a model's first token) is shown without waiting a flush.
    this.lastFlushAt = 0;
    this.typingAt = Date.now();
    this.lastPersistAt = this.typingAt;
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
   * Shows what the digital employee is doing (a `status` block after the markdown, e.g. while an action runs), or
   * removes it (`null`). Partials only: the complete snapshot never carries it.
   */
  status(text: string | null): void {
    if (this.finished) return;
    this.statusBlock = text === null ? undefined : { id: randomUUID(), type: 'status', text };
    this.scheduleFlush();
  }

  /**
   * Adds interactive blocks (already validated) after the markdown; published with the next partial and the
   * `complete`. A failed reply drops them (complete with an error), so no offer outlives a broken answer.
   */
  offer(blocks: readonly ReplyBlockInput[]): void {
    if (this.finished || blocks.length === 0) return;
    for (const block of blocks) this.offers.push({ id: randomUUID(), ...block } as Block);
    // `sources` come right after the markdown, before any choices (docs/knowledge.md "Cited answers").
    this.offers.sort((a, b) => Number(b.type === 'sources') - Number(a.type === 'sources'));
    this.scheduleFlush();
  }

  /**
   * Stores the final snapshot — the markdown so far, plus an error block when the reply failed — and then publishes
   * it as the `complete`. While the store is away it waits (see the class comment), the whole text shown as a
   * partial meanwhile; it throws `ReplyNotStored` when the store stayed away past `storeWaitMs` or the node shuts
   * down, leaving the message to a takeover. Once one call has stored it, later calls change nothing; a call whose
   * write failed for another reason throws, and the caller's next call (the failure path, with its error block)
   * tries again.
   */
  complete(error?: Omit<ErrorBlock, 'id' | 'type'>): Promise<MessageSnapshot> {
    const attempt = this.completing.then(() => this.completeNow(error));
    this.completing = attempt.catch(() => {});
    return attempt;
  }

  private async completeNow(error?: Omit<ErrorBlock, 'id' | 'type'>): Promise<MessageSnapshot> {
    if (this.abandoned) throw new ReplyNotStored(this.snapshot.id, { cause: undefined });
    if (this.completed || this.supersededFlag) return this.snapshot;
    // Text still waiting for its flush goes out as a partial first, at its turn (the coalescing holds for it too):
    // should the store make the complete wait, the visitor reads every word meanwhile.
    if (this.content.length > this.flushedLength) {
      const turn = this.nextFlushAt() - Date.now();
      if (turn > 0) await new Promise((resolve) => setTimeout(resolve, turn));
      if (this.content.length > this.flushedLength) {
        this.dirty = true;
        this.flush();
      }
    }
    this.finished = true;
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    // Partials already on their way go first: their sequences are below the complete's.
    await this.settled();
    if (this.supersededFlag) return this.snapshot;
    const blocks: Block[] = error
      ? [...this.markdown(), { id: randomUUID(), type: 'error', code: error.code, message: error.message }]
      : [...this.markdown(), ...this.offers];
    const snapshot: MessageSnapshot = {
      ...this.snapshot,
      status: 'complete',
      blocks,
      updated_at: new Date().toISOString(),
    };
    const sequence = ++this.sequence;
    // The completed message must be durable before anyone is told it is complete.
    const stored = await untilStoreAnswers(
      () => this.deps.store.complete(snapshot, sequence, this.companyId),
      {
        waitMs: this.deps.storeWaitMs,
        signal: this.deps.shutdown,
        onWaiting: (err) =>
          this.warnThrottled(err, 'the store cannot take a completed reply now; waiting for it'),
      },
    ).catch((err: unknown) => {
      if (!isStoreUnavailable(err)) throw err;
      this.abandon();
      this.deps.logger.warn(
        { err: { message: (err as Error).message }, messageId: snapshot.id },
        'gave up waiting for the store to take a completed reply; it is left to a takeover',
      );
      throw new ReplyNotStored(snapshot.id, { cause: err });
    });
    this.completed = true;
    this.snapshot = snapshot;
    this.deps.live.delete(snapshot.id);
    (this.deps.shown ?? NO_SHOWN_TEXTS).forget(snapshot.id);
    if (!stored) {
      this.supersede();
      return snapshot;
    }
    await this.deps.announcements.announce(this.companyId, snapshot, sequence);
    return snapshot;
  }

  /** Resolves once every partial flushed so far has been stored and published, or given up on. */
  async idle(): Promise<void> {
    while (this.persisting || this.publishing) await Promise.allSettled([this.persisting, this.publishing]);
  }

  /** The markdown block, if the reply has text yet. */
  private markdown(): Block[] {
    return this.content.length > 0 ? [{ id: this.markdownId, type: 'markdown', content: this.content }] : [];
  }

  /** The markdown, the status (if any) and the offers as they stand. */
  private blocks(): Block[] {
    return [...this.markdown(), ...(this.statusBlock ? [this.statusBlock] : []), ...this.offers];
  }

  /** Publishes now if the last partial is old enough, else at most one flush later (coalescing). */
  private scheduleFlush(): void {
    this.dirty = true;
    const wait = this.nextFlushAt() - Date.now();
    if (wait <= 0) this.flush();
    else this.flushTimer ??= setTimeout(() => this.flush(), wait);
  }

  /**
   * When the next partial may go out. Normally `flushIntervalMs` after the last one with text (the typing envelope
   * does not hold the first words back). While the node is busy taking in visitor messages, the busy interval, counted
   * from the typing envelope too: on one thread each envelope of a running reply delays the first envelope of every
   * visitor still waiting to be taken in (the one that tells him someone is there), and since each partial is a full
   * replace snapshot (docs/protocol.md), fewer of them lose no text — only updates the reader would barely notice.
   * Decided at each flush, so a reply is back at its normal pace as soon as the intake has caught up.
   */
  private nextFlushAt(): number {
    const busy = this.deps.busy;
    if (busy && busy.flushIntervalMs > this.deps.flushIntervalMs && busy.now())
      return Math.max(this.lastFlushAt, this.typingAt) + busy.flushIntervalMs;
    return this.lastFlushAt + this.deps.flushIntervalMs;
  }

  private supersede(): void {
    if (this.supersededFlag) return;
    this.supersededFlag = true;
    this.stop();
    this.onSuperseded();
  }

  /** Gave up waiting for the store: nothing more is published; the lease lapses and a takeover ends the message. */
  private abandon(): void {
    this.abandoned = true;
    this.stop();
  }

  private stop(): void {
    this.finished = true;
    this.unpublished = undefined;
    clearTimeout(this.flushTimer);
    this.deps.live.delete(this.snapshot.id);
  }

  private flush(): void {
    // Called early (the node is no longer busy, or the reply ends), it replaces the flush that was scheduled.
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (!this.dirty || this.finished) return;
    this.dirty = false;
    this.lastFlushAt = Date.now();
    const snapshot: MessageSnapshot = {
      ...this.snapshot,
      blocks: this.blocks(),
      updated_at: new Date(this.lastFlushAt).toISOString(),
    };
    this.snapshot = snapshot;
    this.flushedLength = this.content.length;
    // The sequence it will most likely go out with (publishPartials takes the real one).
    const sequence = this.sequence + 1;
    // On schedule, and when the reservation runs out while the store answers (while it does not, only on schedule:
    // an outage is not hammered with a write per partial).
    const due = this.lastFlushAt - this.lastPersistAt >= this.deps.persistIntervalMs;
    if (due || (sequence > this.reserved && !this.storeAway)) void this.persist(snapshot, sequence);
    this.unpublished = snapshot;
    this.publishing ??= this.publishPartials().finally(() => {
      this.publishing = undefined;
    });
  }

  /** Writes the snapshot and a reservation ahead of its sequence, unless a write is in flight already. */
  private persist(snapshot: MessageSnapshot, sequence: number): Promise<void> {
    if (this.persisting) return this.persisting;
    this.lastPersistAt = Date.now();
    const reservation = sequence + RESERVED_SEQUENCES;
    this.persisting = this.deps.store
      .persistPartial(snapshot, reservation)
      .then(
        (stored) => {
          if (!stored) return this.supersede();
          this.reserved = Math.max(this.reserved, reservation);
          this.storeAway = false;
        },
        (err: unknown) => {
          // Harmless for now: the next persist writes a newer snapshot, and the completion waits for the store.
          this.storeAway = true;
          this.warnThrottled(err, 'could not write a partial snapshot; streaming on');
        },
      )
      .finally(() => {
        this.persisting = undefined;
      });
    return this.persisting;
  }

  /**
   * Publishes the newest partial, one at a time; a partial replaced before its turn is never published, and each
   * published one takes the next sequence, so sequences count up by one.
   */
  private async publishPartials(): Promise<void> {
    for (let snapshot = this.unpublished; snapshot !== undefined; snapshot = this.unpublished) {
      this.unpublished = undefined;
      const sequence = this.sequence + 1;
      // A reservation first while the store answers (a write already in flight may reserve too little: then one
      // more); while it does not, the outage allowance.
      while (sequence > this.reserved && !this.storeAway && !this.supersededFlag)
        await this.persist(snapshot, sequence);
      if (this.supersededFlag || this.abandoned) return;
      const limit = this.storeAway ? this.reserved + OUTAGE_SEQUENCES : this.reserved;
      if (sequence > limit) continue;
      // Recorded before anyone can see it (a publish, a REST read, a mid-stream subscribe): a takeover after this
      // node dies completes the reply with at least this text. Not recorded, not shown — the next partial (or the
      // complete) carries these words.
      try {
        await (this.deps.shown ?? NO_SHOWN_TEXTS).record(snapshot.id, markdownText(snapshot.blocks));
      } catch (err) {
        this.warnThrottled(err, 'could not record the text of a partial snapshot; not publishing it');
        continue;
      }
      if (this.supersededFlag || this.abandoned) return;
      this.sequence = sequence;
      this.deps.live.set(snapshot, sequence);
      try {
        await announce(this.deps.broadcaster, this.companyId, snapshot, sequence);
      } catch (err) {
        // A lost partial is harmless (the next snapshot replaces it); the complete is what must arrive.
        this.warnThrottled(err, 'could not publish a partial snapshot');
      }
    }
  }

  /** Resolves once no partial is being published or written. */
  private async settled(): Promise<void> {
    while (this.publishing || this.persisting) await Promise.all([this.publishing, this.persisting]);
  }

  /** An outage makes these fail for every reply and every partial: throttled (logging/throttled-warnings.ts). */
  private warnThrottled(err: unknown, message: string): void {
    this.warnings.warn({ err: errorField(err), messageId: this.snapshot.id }, message);
  }
}
