import type { Redis } from 'ioredis';

/**
 * The longest text of each streaming reply that clients may have been shown, kept outside the node that streams it
 * (docs/architecture.md "Flow of a message"). The store holds a partial reply's text only as of its last persist
 * (`streamPersistIntervalMs`), while partials go out every flush: a node that dies between the two has shown words
 * the store does not have. The contract (DESIGN "Hostile input and faults") is that the final `complete` text
 * begins with every text any client was shown, so a stream records each partial's text here *before* it publishes
 * it (or serves it to REST reads and mid-stream subscribers), and does not publish a partial whose record failed; the
 * node that takes a dead node's reply over completes it with the longest text recorded (conversation-engine.ts
 * `completeAbandoned`).
 */
export interface ShownTexts {
  /** Resolves once `text` is recorded for `messageId` where a takeover finds it; rejects when it could not be. */
  record(messageId: string, text: string): Promise<void>;
  /**
   * The longest text recorded for the message, `undefined` when none is. Rejects when it cannot be known now (the
   * broker is unreachable): a takeover then waits rather than take words back.
   */
  longest(messageId: string): Promise<string | undefined>;
  /** The reply is stored complete: its record is no longer needed (best effort; it expires anyway). */
  forget(messageId: string): void;
}

/**
 * One node alone: a reply can only be finished by this node after a restart, from the store. Nothing is recorded
 * (a text shown since the last persist is lost with the process; see docs/architecture.md "Flow of a message").
 */
export const NO_SHOWN_TEXTS: ShownTexts = {
  record: async () => {},
  longest: async () => undefined,
  forget: () => {},
};

/**
 * How long a record outlives its last update. A takeover comes one lease after the node stopped beating, or after a
 * store outage the stream gave up on (`REPLY_STORE_WAIT_MS`, two minutes by default) plus a lease: a quarter of an
 * hour covers both with room to spare, and a completed reply deletes its record at once.
 */
export const SHOWN_TEXT_TTL_MS = 15 * 60_000;

/**
 * Records as Redis strings (`SET … PX`), shared by the nodes of a cluster (same prefix). Records made in one turn of
 * the event loop (many replies streaming at once) go to Redis as one pipeline, so the cost is one round trip per
 * turn, not one per partial.
 */
export class RedisShownTexts implements ShownTexts {
  private batch: Map<string, string> | undefined;
  private batchDone: Promise<void> | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly options: { prefix: string; ttlMs?: number },
  ) {}

  record(messageId: string, text: string): Promise<void> {
    if (!this.batch) {
      const batch = new Map<string, string>();
      this.batch = batch;
      this.batchDone = new Promise<void>((resolve, reject) => {
        setImmediate(() => {
          this.batch = undefined;
          this.write(batch).then(resolve, reject);
        });
      });
    }
    // A later text of the same reply within the turn replaces the earlier one: texts only grow.
    this.batch.set(messageId, text);
    return this.batchDone!;
  }

  async longest(messageId: string): Promise<string | undefined> {
    return (await this.redis.get(this.key(messageId))) ?? undefined;
  }

  forget(messageId: string): void {
    this.redis.del(this.key(messageId)).catch(() => {});
  }

  private async write(batch: Map<string, string>): Promise<void> {
    const pipeline = this.redis.pipeline();
    const ttl = this.options.ttlMs ?? SHOWN_TEXT_TTL_MS;
    for (const [id, text] of batch) pipeline.set(this.key(id), text, 'PX', ttl);
    const results = (await pipeline.exec()) ?? [];
    if (results.length < batch.size) throw new Error('redis: shown texts not recorded');
    const failed = results.find(([err]) => err);
    if (failed) throw failed[0];
  }

  private key(messageId: string): string {
    return `${this.options.prefix}reply-shown:${messageId}`;
  }
}

/** The text of a snapshot's markdown block(s), what a client shows of a streaming reply. */
export function markdownText(blocks: readonly { type: string; content?: unknown }[]): string {
  let text = '';
  for (const b of blocks) if (b.type === 'markdown' && typeof b.content === 'string') text += b.content;
  return text;
}
