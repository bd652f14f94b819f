import { type Kysely, PostgresAdapter, sql } from 'kysely';
import { createSearchTriggers, POSTGRES_DOCUMENT, searchedText } from './062_message_search.ts';

/**
 * Only complete messages are searched (webchat/search/), so only they are indexed. Migration 062 indexed every
 * version of every message: a streaming reply's typing row and each partial snapshot written while it streams (once
 * a second) went through the full-text index and out again, on the hot path of every reply. SQLite's triggers now
 * fire for complete rows only (a reply is indexed once, when it completes); PostgreSQL's GIN index becomes partial,
 * and the search queries carry the same `status = 'complete'` predicate so that they can use it.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop index messages_search`.execute(db);
    await sql`create index messages_search on messages using gin (${sql.raw(POSTGRES_DOCUMENT)}) where status = 'complete'`.execute(
      db,
    );
    return;
  }
  await dropSearchTriggers(db);
  await createSearchTriggers(db, { completeOnly: true });
  await sql`delete from message_search where rowid in (select rowid from messages where status <> 'complete')`.execute(
    db,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop index messages_search`.execute(db);
    await sql`create index messages_search on messages using gin (${sql.raw(POSTGRES_DOCUMENT)})`.execute(db);
    return;
  }
  await dropSearchTriggers(db);
  await createSearchTriggers(db, { completeOnly: false });
  await sql`insert into message_search (rowid, content, conversation_id)
    select rowid, ${searchedText('messages')}, conversation_id from messages where status <> 'complete'`.execute(
    db,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
async function dropSearchTriggers(db: Kysely<any>): Promise<void> {
  await sql`drop trigger message_search_insert`.execute(db);
  await sql`drop trigger message_search_update`.execute(db);
}
