import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import type { ScheduledJob } from '../../jobs/scheduler.ts';
import type { Database } from '../../storage/schema.ts';
import type { BlobStore } from './blob-store.ts';

/** How often the sweep runs (on one node of the cluster). */
const SWEEP_INTERVAL_MS = 10 * 60 * 1000;

/** Attachments, and blobs, one batch deletes at most. */
const BATCH_SIZE = 100;

/**
 * How long after a message being sent named an attachment a sweep leaves it alone: the message is stored within
 * moments of the claim (attachments.service.ts `blocksOf`), an hour is a wide margin.
 */
export const CLAIM_MS = 60 * 60 * 1000;

export interface AttachmentSweeperOptions {
  db: Kysely<Database>;
  blobs: BlobStore;
  /** An upload no message names this long after it was made is deleted (PARLEY_ATTACHMENT_UNSENT_TTL_MS). */
  unsentTtlMs: number;
  /**
   * A blob no attachment row names is deleted once it is this old; younger ones may be uploads still streaming
   * (their row is written when the bytes are in): longer than any upload may take (the HTTP headers and body
   * time-outs), with room to spare.
   */
  orphanGraceMs: number;
  /** Told what each batch deleted (metrics). */
  onDeleted?(what: 'unsent_attachment' | 'unowned_blob', count: number): void;
}

/**
 * The attachment sweeper (docs/design.md "Attachments", a scheduled job: jobs/scheduler.ts):
 * 1. an upload that no message names `unsentTtlMs` after it was made is deleted — uploads never sent would
 *    otherwise stay for ever (85 of 87 stored files in one abuse test);
 * 2. a blob whose attachment row is gone is deleted — so a blob lives as long as its row, whatever deleted the row:
 *    step 1, a conversation deleted (its attachment rows go with it, `ON DELETE CASCADE`, and so with a company),
 *    or a node that died between writing a blob and its row.
 * "Names" means a stored message's blocks hold an attachment block with its id; a message being sent claims its
 * attachments first (`claimed_at`), so a sweep at that moment leaves them alone. Each delete re-checks its
 * conditions in the same statement, so two sweeps at once, or a message stored meanwhile, never lose anything.
 */
export class AttachmentSweeper implements ScheduledJob {
  readonly name = 'attachments.sweep';
  readonly intervalMs = SWEEP_INTERVAL_MS;

  constructor(private readonly options: AttachmentSweeperOptions) {}

  async runBatch(now: number): Promise<{ more: boolean }> {
    const unsent = await this.deleteUnsent(now);
    const blobs = await this.options.blobs.deleteUnowned(now - this.options.orphanGraceMs, BATCH_SIZE);
    if (unsent > 0) this.options.onDeleted?.('unsent_attachment', unsent);
    if (blobs > 0) this.options.onDeleted?.('unowned_blob', blobs);
    return { more: unsent === BATCH_SIZE || blobs === BATCH_SIZE };
  }

  /** Deletes up to BATCH_SIZE attachment rows that are old, unclaimed and named by no message; their blobs follow. */
  private async deleteUnsent(now: number): Promise<number> {
    const unsent = unsentBefore(
      new Date(now - this.options.unsentTtlMs).toISOString(),
      new Date(now - CLAIM_MS).toISOString(),
    );
    const found = await this.options.db
      .selectFrom('attachments')
      .select('id')
      .where(unsent)
      .orderBy('created_at')
      .limit(BATCH_SIZE)
      .execute();
    if (found.length === 0) return 0;
    const deleted = await this.options.db
      .deleteFrom('attachments')
      .where(
        'id',
        'in',
        found.map((row) => row.id),
      )
      .where(unsent)
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }
}

/**
 * An attachment made before `createdBefore`, not claimed since `claimedBefore`, that no message of its conversation
 * names. Stored blocks are JSON (`{"id":…,"type":"attachment","attachment_id":"<id>",…}`, JSON.stringify: no spaces),
 * and the messages of one conversation are found by their (conversation, position) index.
 */
function unsentBefore(createdBefore: string, claimedBefore: string) {
  return (eb: ExpressionBuilder<Database, 'attachments'>) =>
    eb.and([
      eb('attachments.created_at', '<', createdBefore),
      eb.or([eb('attachments.claimed_at', 'is', null), eb('attachments.claimed_at', '<', claimedBefore)]),
      eb.not(
        eb.exists(
          eb
            .selectFrom('messages')
            .select('messages.id')
            .whereRef('messages.conversation_id', '=', 'attachments.conversation_id')
            .where(
              'messages.blocks',
              'like',
              sql<string>`'%"attachment_id":"' || ${eb.ref('attachments.id')} || '"%'`,
            ),
        ),
      ),
    ]);
}
