import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Block, ErrorBlock, MessageAuthor, MessageSnapshot } from '../messages/message.ts';
import type { MessageStore } from '../messages/message-store.ts';
import { announce, type Broadcaster } from './broadcaster.ts';
import type { LiveSnapshots } from './live-snapshots.ts';

export interface ReplyStreamDeps {
  store: MessageStore;
  broadcaster: Broadcaster;
  live: LiveSnapshots;
  logger: Logger;
  /** Shortest time between two partial envelopes (coalescing). */
  flushIntervalMs: number;
  /** Shortest time between two database writes of the partial snapshot. */
  persistIntervalMs: number;
}

/**
 * One streamed message on its way out (DESIGN.md "MessageEnvelope"): sequence 1 is a partial snapshot with a
 * typing block, then `replace` partials whose markdown grows — at most one per `flushIntervalMs`, however fast the
 * deltas come — and finally exactly one `complete`. Only the first and the last envelope go into channel history.
 * Envelopes are published strictly one after another, so their sequences arrive in order.
 */
export class ReplyStream {
  private sequence = 0;
  private content = '';
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
  ) {}

  get messageId(): string {
    return this.snapshot.id;
  }

  get text(): string {
    return this.content;
  }

  /**
   * Stores the message (status partial, a typing block) and publishes envelope 1. A failed publication is as
   * harmless as a lost partial: the reply goes on, so the stored message still gets its `complete` rather than
   * staying partial.
   */
  async start(): Promise<MessageSnapshot> {
    this.snapshot = await this.deps.store.insert({
      conversationId: this.conversationId,
      role: 'digital_employee',
      author: this.author,
      status: 'partial',
      blocks: [{ id: randomUUID(), type: 'typing', typing: true }],
      sequence: 1,
    });
    this.sequence = 1;
    this.deps.live.set(this.snapshot);
    this.lastFlushAt = Date.now();
    this.lastPersistAt = this.lastFlushAt;
    try {
      await announce(this.deps.broadcaster, this.companyId, this.snapshot, this.sequence, true);
    } catch (err) {
      this.deps.logger.warn({ err, messageId: this.snapshot.id }, 'could not publish the typing snapshot');
    }
    return this.snapshot;
  }

  /** Adds a delta; publishes now if the last partial is old enough, else at most one flush later. */
  append(delta: string): void {
    if (this.finished || delta.length === 0) return;
    this.content += delta;
    this.dirty = true;
    const wait = this.lastFlushAt + this.deps.flushIntervalMs - Date.now();
    if (wait <= 0) this.flush();
    else this.flushTimer ??= setTimeout(() => this.flush(), wait);
  }

  /**
   * Publishes the final `complete` snapshot: the markdown so far, plus an error block when the reply failed.
   * Once one call has stored it, later calls change nothing. A call whose write failed throws, and the caller's
   * next call (the failure path, with its error block) tries again, so a database hiccup does not leave the
   * message partial until the abandoned-reply sweep.
   */
  async complete(error?: Omit<ErrorBlock, 'id' | 'type'>): Promise<MessageSnapshot> {
    if (this.completed) return this.snapshot;
    this.finished = true;
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const blocks: Block[] = [];
    if (this.content.length > 0)
      blocks.push({ id: this.markdownId, type: 'markdown', content: this.content });
    if (error) blocks.push({ id: randomUUID(), type: 'error', code: error.code, message: error.message });
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
      await this.deps.store.update(snapshot, sequence);
      this.completed = true;
      this.deps.live.delete(snapshot.id);
      await announce(this.deps.broadcaster, this.companyId, snapshot, sequence, true);
    });
    // A failed attempt must not block the next one behind a rejected chain.
    this.chain = attempt.catch(() => {});
    await attempt;
    return snapshot;
  }

  private flush(): void {
    this.flushTimer = undefined;
    if (!this.dirty || this.finished) return;
    this.dirty = false;
    this.lastFlushAt = Date.now();
    const snapshot: MessageSnapshot = {
      ...this.snapshot,
      blocks: [{ id: this.markdownId, type: 'markdown', content: this.content }],
      updated_at: new Date(this.lastFlushAt).toISOString(),
    };
    const sequence = ++this.sequence;
    this.snapshot = snapshot;
    this.deps.live.set(snapshot);
    const persist = this.lastFlushAt - this.lastPersistAt >= this.deps.persistIntervalMs;
    if (persist) this.lastPersistAt = this.lastFlushAt;
    this.chain = this.chain
      .then(async () => {
        if (persist) await this.deps.store.update(snapshot, sequence);
        await announce(this.deps.broadcaster, this.companyId, snapshot, sequence, false);
      })
      .catch((err) => {
        // A lost partial is harmless (the next snapshot replaces it); the complete is what must arrive.
        this.deps.logger.warn({ err, messageId: snapshot.id }, 'could not publish a partial snapshot');
      });
  }
}
