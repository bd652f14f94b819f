import { type Kysely, sql } from 'kysely';

/**
 * The two lookups of every knowledge search's vocabulary statement (packages/server/src/knowledge/vocabulary.ts
 * `vocabularyRows`) read from an index alone, on both stores (docs/knowledge.md "Measuring it"):
 *
 * - the company's ready sources, counted for the word weights: `knowledge_sources_ready` (company, status). Through
 *   `knowledge_sources_company` (company, created_at) PostgreSQL read every row of the company's sources, text and
 *   all: 591 buffers at 1,521 sources (a sequential scan), 4 with this index (an index-only scan).
 * - the typo candidates of a word the vocabulary lacks: `knowledge_terms_near` (company, first letter, length, term,
 *   sources). Through `knowledge_terms_initial` (company, first letter) every word with that letter was read and
 *   those of the wrong length dropped: 664 buffers for four misspelt words at 11,665 words, 31 with this index.
 *
 * The same rows come back, so every result is unchanged (checked over the bench's 346 questions and 200 catalogue
 * searches on both stores: bench/knowledge/explain.ts --dump). `knowledge_terms_initial` is dropped: the new index
 * begins with its columns, so it serves every read it served, and vocabulary upkeep keeps one index to write, not two.
 * On PostgreSQL the index-only scans need the tables' visibility maps: the knowledge upkeep vacuums both tables
 * (packages/server/src/knowledge/knowledge.service.ts `maintainIndex`).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('knowledge_sources_ready')
    .on('knowledge_sources')
    .columns(['company_id', 'status'])
    .execute();
  await db.schema
    .createIndex('knowledge_terms_near')
    .on('knowledge_terms')
    .expression(sql`company_id, initial, length(term), term, sources`)
    .execute();
  await db.schema.dropIndex('knowledge_terms_initial').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('knowledge_terms_initial')
    .on('knowledge_terms')
    .columns(['company_id', 'initial'])
    .execute();
  await db.schema.dropIndex('knowledge_terms_near').execute();
  await db.schema.dropIndex('knowledge_sources_ready').execute();
}
