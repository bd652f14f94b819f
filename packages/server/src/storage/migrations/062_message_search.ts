import { type Kysely, PostgresAdapter, sql } from 'kysely';

/**
 * Full-text search over message text (webchat/search/): PostgreSQL indexes the `content` of every block with a GIN
 * index on a tsvector expression (no extra column to keep in step); SQLite keeps an FTS5 table in step with
 * `messages` by triggers (keyed by the message's rowid), filled here with what already exists. The `simple`
 * configuration / `unicode61` tokenizer: no language-specific stemming, so every language is searched alike.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`create index messages_search on messages using gin (${sql.raw(POSTGRES_DOCUMENT)})`.execute(db);
    return;
  }
  await sql`create virtual table message_search using fts5(content, conversation_id unindexed, tokenize = 'unicode61 remove_diacritics 0')`.execute(
    db,
  );
  await createSearchTriggers(db, { completeOnly: false });
  await sql`create trigger message_search_delete after delete on messages begin
    delete from message_search where rowid = old.rowid;
  end`.execute(db);
  await sql`insert into message_search (rowid, content, conversation_id)
    select rowid, ${searchedText('messages')}, conversation_id from messages`.execute(db);
}

/** SQLite: the searched text of a `messages` row — its blocks' `content`, space-separated. */
export const searchedText = (row: string) =>
  sql.raw(`(select group_concat(json_extract(value, '$.content'), ' ') from json_each(${row}.blocks))`);

/**
 * SQLite: the triggers that keep `message_search` in step with inserted and updated messages — every one (062), or
 * complete ones only (063).
 */
export async function createSearchTriggers(
  // biome-ignore lint/suspicious/noExplicitAny: see up().
  db: Kysely<any>,
  options: { completeOnly: boolean },
): Promise<void> {
  const when = sql.raw(options.completeOnly ? "when new.status = 'complete' " : '');
  const columns = sql.raw(options.completeOnly ? 'blocks, status' : 'blocks');
  await sql`create trigger message_search_insert after insert on messages ${when}begin
    insert into message_search (rowid, content, conversation_id) values (new.rowid, ${searchedText('new')}, new.conversation_id);
  end`.execute(db);
  await sql`create trigger message_search_update after update of ${columns} on messages ${when}begin
    delete from message_search where rowid = old.rowid;
    insert into message_search (rowid, content, conversation_id) values (new.rowid, ${searchedText('new')}, new.conversation_id);
  end`.execute(db);
}

/** The indexed document of a message on PostgreSQL; queries must use exactly this expression to use the index. */
export const POSTGRES_DOCUMENT = `to_tsvector('simple', jsonb_path_query_array(blocks::jsonb, '$[*].content'))`;

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop index messages_search`.execute(db);
    return;
  }
  for (const trigger of ['message_search_insert', 'message_search_update', 'message_search_delete'])
    await sql`drop trigger ${sql.raw(trigger)}`.execute(db);
  await sql`drop table message_search`.execute(db);
}
