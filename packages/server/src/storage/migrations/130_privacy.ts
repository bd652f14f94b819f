import { type Kysely, PostgresAdapter, sql } from 'kysely';
import { ID, TIMESTAMP } from '../columns.ts';

/**
 * Privacy (privacy/, docs/privacy.md):
 * - `privacy_settings`: a company's retention periods in days; a `null` column means "keep" (off);
 * - `privacy_erasures`: the receipt of every erasure, for audit — ids, counts, who and when, never personal data;
 * - `webhook_events.conversation_id`: the conversation an event is about (null for the others), filled in for the
 *   events already stored, so an erasure finds the outbox rows carrying a conversation's data by index, not by text;
 * - an index for the retention sweep of resolved conversations (`status`, `updated_at`);
 * - SQLite: FTS5 `secure-delete` on `message_search` (SQLite ≥ 3.42, https://sqlite.org/fts5.html "The
 *   secure-delete configuration option"), so a deleted message's tokens leave the full-text index at once instead
 *   of lingering in older index segments until a merge.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('privacy_settings')
    .addColumn('company_id', ID, (c) => c.primaryKey().references('companies.id').onDelete('cascade'))
    .addColumn('resolved_conversation_days', 'integer')
    .addColumn('delivered_webhook_days', 'integer')
    .addColumn('audit_days', 'integer')
    .addColumn('updated_at', TIMESTAMP, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('privacy_erasures')
    .addColumn('id', ID, (c) => c.primaryKey())
    .addColumn('company_id', ID, (c) => c.notNull().references('companies.id').onDelete('cascade'))
    .addColumn('selector', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('conversation_ids', 'text', (c) => c.notNull())
    .addColumn('erased', 'text', (c) => c.notNull())
    .addColumn('erased_at', TIMESTAMP, (c) => c.notNull())
    .execute();
  await db.schema.alterTable('webhook_events').addColumn('conversation_id', ID).execute();
  const fromBody =
    db.getExecutor().adapter instanceof PostgresAdapter
      ? sql`(body::jsonb -> 'data' ->> 'conversation_id')`
      : sql`json_extract(body, '$.data.conversation_id')`;
  await sql`update webhook_events set conversation_id = ${fromBody}`.execute(db);
  await db.schema
    .createIndex('webhook_events_conversation')
    .on('webhook_events')
    .columns(['conversation_id'])
    .execute();
  await db.schema
    .createIndex('conversations_status_updated')
    .on('conversations')
    .columns(['status', 'updated_at'])
    .execute();
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) {
    await sql`insert into message_search (message_search, rank) values ('secure-delete', 1)`.execute(db);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) {
    await sql`insert into message_search (message_search, rank) values ('secure-delete', 0)`.execute(db);
  }
  await db.schema.dropIndex('conversations_status_updated').execute();
  await db.schema.dropIndex('webhook_events_conversation').execute();
  await db.schema.alterTable('webhook_events').dropColumn('conversation_id').execute();
  await db.schema.dropTable('privacy_erasures').execute();
  await db.schema.dropTable('privacy_settings').execute();
}
