import { type Kysely, PostgresAdapter, sql } from 'kysely';
import { ID, TIMESTAMP } from '../columns.ts';

/**
 * Knowledge sources and their chunks (knowledge/, docs/knowledge.md). Full text is each store's own engine:
 * - PostgreSQL: a stored generated tsvector column `search` (title weighted A, body B, `english` configuration:
 *   stemming and stop words) with a GIN index.
 * - SQLite: an FTS5 table (porter stemmer over unicode61, diacritics folded) kept in step with `knowledge_chunks` by
 *   triggers, keyed by the chunk's rowid; columns title and body so bm25() can weight them apart.
 * Chunks carry `company_id` so every search is filtered by tenant before ranking.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('knowledge_sources')
    .addColumn('id', ID, (c) => c.primaryKey())
    .addColumn('company_id', ID, (c) => c.notNull().references('companies.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('url', 'text')
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('fetched', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('chunks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .addColumn('updated_at', TIMESTAMP, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('knowledge_sources_company')
    .on('knowledge_sources')
    .columns(['company_id', 'created_at'])
    .execute();
  await db.schema
    .createTable('knowledge_chunks')
    .addColumn('id', ID, (c) => c.primaryKey())
    .addColumn('company_id', ID, (c) => c.notNull())
    .addColumn('source_id', ID, (c) => c.notNull().references('knowledge_sources.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('knowledge_chunks_source')
    .on('knowledge_chunks')
    .columns(['source_id', 'position'])
    .execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    // A stored generated column rather than an expression index: ranking reads the stored tsvector instead of
    // parsing every matching passage again on each search.
    await sql`alter table knowledge_chunks add column search tsvector generated always as (${sql.raw(POSTGRES_CHUNK_DOCUMENT)}) stored`.execute(
      db,
    );
    await sql`create index knowledge_chunks_search on knowledge_chunks using gin (search)`.execute(db);
    await db.schema
      .createIndex('knowledge_chunks_company')
      .on('knowledge_chunks')
      .columns(['company_id'])
      .execute();
    return;
  }
  await db.schema
    .createIndex('knowledge_chunks_company')
    .on('knowledge_chunks')
    .columns(['company_id'])
    .execute();
  await sql`create virtual table knowledge_search using fts5(title, body, tokenize = 'porter unicode61 remove_diacritics 2')`.execute(
    db,
  );
  await sql`create trigger knowledge_search_insert after insert on knowledge_chunks begin
    insert into knowledge_search (rowid, title, body) values (new.rowid, new.title, new.body);
  end`.execute(db);
  await sql`create trigger knowledge_search_delete after delete on knowledge_chunks begin
    delete from knowledge_search where rowid = old.rowid;
  end`.execute(db);
}

/** The indexed document of a chunk on PostgreSQL: title weighted A, body B, `english` stemming. */
export const POSTGRES_CHUNK_DOCUMENT = `(setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', body), 'B'))`;

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) {
    await sql`drop trigger knowledge_search_insert`.execute(db);
    await sql`drop trigger knowledge_search_delete`.execute(db);
    await sql`drop table knowledge_search`.execute(db);
  }
  await db.schema.dropTable('knowledge_chunks').execute();
  await db.schema.dropTable('knowledge_sources').execute();
}
