import type { Kysely } from 'kysely';
import { ID, JSON_TEXT, TIMESTAMP } from '../columns.ts';

/**
 * Attachments (webchat/attachments/): each uploaded file's metadata, its bytes in chunked rows (the store-backed
 * BlobStore, so every node of a cluster serves every file), and each company's own limits. `bytea` is PostgreSQL's
 * binary type; SQLite gives a column of that declared type BLOB affinity (sqlite.org/datatype3.html §3.1 rule 4),
 * so one migration serves both and both drivers hand back a Buffer.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('attachment_blob_chunks')
    .addColumn('blob_key', ID, (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', 'bytea', (c) => c.notNull())
    .addPrimaryKeyConstraint('attachment_blob_chunks_pk', ['blob_key', 'seq'])
    .execute();

  await db.schema
    .createTable('attachments')
    .addColumn('id', ID, (c) => c.primaryKey())
    .addColumn('company_id', ID, (c) => c.notNull().references('companies.id').onDelete('cascade'))
    .addColumn('conversation_id', ID, (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('blob_key', ID, (c) => c.notNull())
    .addColumn('uploaded_by', 'text', (c) => c.notNull())
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('attachments_conversation')
    .on('attachments')
    .columns(['conversation_id'])
    .execute();

  await db.schema
    .createTable('attachment_settings')
    .addColumn('company_id', ID, (c) => c.primaryKey().references('companies.id').onDelete('cascade'))
    .addColumn('max_attachment_bytes', 'integer')
    .addColumn('allowed_types', JSON_TEXT)
    .addColumn('updated_at', TIMESTAMP, (c) => c.notNull())
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('attachment_settings').execute();
  await db.schema.dropTable('attachments').execute();
  await db.schema.dropTable('attachment_blob_chunks').execute();
}
