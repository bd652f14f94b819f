import type { Kysely } from 'kysely';
import { ID } from '../columns.ts';

/**
 * Faster and more forgiving knowledge search (docs/knowledge.md "Ranking" and "Misspelt words"): `knowledge_terms`,
 * each company's vocabulary (every word of its passages, the number of its sources that hold it, and its first
 * letter). The search reads it to correct misspelt question words and to keep words most sources hold out of the
 * wide full-text match (packages/server/src/knowledge/vocabulary.ts). One table for both stores. Sources indexed before this migration
 * enter the vocabulary when they are next re-indexed (a PUT); the search works without them, untolerant of typos.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('knowledge_terms')
    .addColumn('company_id', ID, (c) => c.notNull().references('companies.id').onDelete('cascade'))
    .addColumn('term', 'text', (c) => c.notNull())
    // The term's first letter: typo candidates are read by it (an equality, so no collation decides a range).
    .addColumn('initial', 'text', (c) => c.notNull())
    .addColumn('sources', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('knowledge_terms_pk', ['company_id', 'term'])
    .execute();
  await db.schema
    .createIndex('knowledge_terms_initial')
    .on('knowledge_terms')
    .columns(['company_id', 'initial'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('knowledge_terms').execute();
}
