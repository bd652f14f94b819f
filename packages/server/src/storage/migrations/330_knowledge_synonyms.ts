import type { Kysely } from 'kysely';
import { ID, TIMESTAMP } from '../columns.ts';

/**
 * Each company's own synonyms for knowledge search (docs/knowledge.md "Company synonyms"): one row per company holding
 * its whole list as JSON (`[{"terms":[…]}, …]`, validated by packages/server/src/knowledge/synonyms.ts), replaced as a
 * whole by `PUT /platform/v1/knowledge/synonyms`. A search reads the row in the statement that already reads the
 * company's vocabulary (packages/server/src/knowledge/vocabulary.ts `vocabularyRows`), by primary key, so a change
 * counts from the next search on every node and a search costs no extra statement. Nothing is indexed from it: the
 * question is expanded, not the passages, so no source is re-indexed when the list changes.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('knowledge_synonyms')
    .addColumn('company_id', ID, (c) => c.primaryKey().references('companies.id').onDelete('cascade'))
    .addColumn('synonyms', 'text', (c) => c.notNull())
    .addColumn('updated_at', TIMESTAMP, (c) => c.notNull())
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('knowledge_synonyms').execute();
}
