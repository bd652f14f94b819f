import type { Kysely } from 'kysely';
import { TIMESTAMP } from '../columns.ts';

/**
 * What the attachment sweeper (webchat/attachments/attachment-sweeper.ts) needs to find its work cheaply:
 * - `attachments.claimed_at`: set when a message being sent names the attachment, so a sweep running at that very
 *   moment leaves it alone until the message is stored;
 * - `attachment_blob_chunks.created_ms`: when a blob was written, so a blob without an attachment row is told apart
 *   from an upload still streaming (its row is written last). Chunks written before this migration count as
 *   written now;
 * - indexes for the unsent (`created_at`), the owner (`blob_key`) and the age (`seq`, `created_ms`) lookups — the
 *   last one covering, so the sweep never reads a blob's bytes.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('attachments').addColumn('claimed_at', TIMESTAMP).execute();
  await db.schema
    .alterTable('attachment_blob_chunks')
    .addColumn('created_ms', 'bigint', (c) => c.notNull().defaultTo(Date.now()))
    .execute();
  await db.schema.createIndex('attachments_created_at').on('attachments').columns(['created_at']).execute();
  await db.schema.createIndex('attachments_blob_key').on('attachments').columns(['blob_key']).execute();
  await db.schema
    .createIndex('attachment_blob_chunks_age')
    .on('attachment_blob_chunks')
    .columns(['seq', 'created_ms', 'blob_key'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('attachment_blob_chunks_age').execute();
  await db.schema.dropIndex('attachments_blob_key').execute();
  await db.schema.dropIndex('attachments_created_at').execute();
  await db.schema.alterTable('attachment_blob_chunks').dropColumn('created_ms').execute();
  await db.schema.alterTable('attachments').dropColumn('claimed_at').execute();
}
