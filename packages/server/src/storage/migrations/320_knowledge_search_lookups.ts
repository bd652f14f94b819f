import { type Kysely, sql } from 'kysely';

/**
 * The two lookups of every knowledge search's vocabulary statement (packages/server/src/knowledge/vocabulary.ts
 * `vocabularyRows`) read only what they need, on both stores (docs/knowledge.md "Measuring it"):
 *
 * - the company's ready sources, counted for the word weights: `knowledge_sources_ready` (company, status). Through
 *   `knowledge_sources_company` (company, created_at) PostgreSQL read every row of the company's sources, text and
 *   all: 591 buffers at 1,521 sources (a sequential scan), 4 with this index (an index-only scan).
 * - the typo candidates of a word the vocabulary lacks: `knowledge_terms_near` (company, first letter, length).
 *   Through `knowledge_terms_initial` (company, first letter) every word with that letter was read and those of the
 *   wrong length dropped (851 rows and 664 buffers for four misspelt words at 11,665 words); now only the 471 of
 *   the right lengths are read. The index leaves out `sources` (with it the lookup read 31 buffers, index only):
 *   vocabulary upkeep changes `sources` of every word of every source indexed, and an indexed column changed makes
 *   each such update write every index of the table anew instead of a heap-only update (PostgreSQL "Heap-Only
 *   Tuples"): with it the bench indexed 407 passages/s against 904 without this migration, back to back.
 *
 * The same rows come back, so every result is unchanged (checked over the bench's 346 questions and 200 catalogue
 * searches on both stores: bench/knowledge/explain.ts --dump). `knowledge_terms_initial` is dropped: the new index
 * begins with its columns, so it serves every read it served, and vocabulary upkeep keeps one index to write, not two.
 * On PostgreSQL the count's index-only scan needs the table's visibility map: the knowledge upkeep vacuums the
 * sources (packages/server/src/knowledge/knowledge.service.ts `maintainIndex`).
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
    .expression(sql`company_id, initial, length(term)`)
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
