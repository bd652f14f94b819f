import { type Kysely, PostgresAdapter, sql } from 'kysely';

/**
 * PostgreSQL only: the passages' GIN index (migration packages/server/src/storage/migrations/100_knowledge.ts) is
 * written directly instead of through its pending list (`fastupdate = off`, PostgreSQL "GIN Fast Update Technique").
 * With the pending list on, every search reads the whole unsorted list beside the index (up to
 * `gin_pending_list_limit`, 4 MB) until a vacuum merges it, and the planner, pricing that in, ranks every passage of
 * the company with a sequential scan: at 10,000 passages a match of every word went from 2.9 ms to 0.08 ms once the
 * list was merged (docs/knowledge.md "Index upkeep"). Indexing pays a little more per passage instead. The list
 * already there is merged now. SQLite's FTS5 has no such list.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`alter index knowledge_chunks_search set (fastupdate = off)`.execute(db);
  await sql`select gin_clean_pending_list('knowledge_chunks_search'::regclass)`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`alter index knowledge_chunks_search reset (fastupdate)`.execute(db);
}
