import type { Kysely } from 'kysely';
import { ID, TIMESTAMP } from '../columns.ts';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('connectors')
    .addColumn('id', ID, (c) => c.primaryKey())
    .addColumn('company_id', ID, (c) => c.notNull().references('companies.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    // Sealed envelope (crypto/sealing.ts) of the current API key; null until a key is set.
    .addColumn('api_key_sealed', 'text')
    // Keyed HMAC of the current key (never the key), to recognise a repeated PUT of the same key.
    .addColumn('api_key_fingerprint', 'text')
    // 0 = never set; bumped by every rotation and bound into the sealed value's associated data.
    .addColumn('key_version', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .addColumn('rotated_at', TIMESTAMP)
    .execute();
  await db.schema
    .createIndex('connectors_company_time')
    .on('connectors')
    .columns(['company_id', 'created_at'])
    .execute();

  // Process-wide secrets of the integrations capability (today: the key that HMACs connector-key fingerprints),
  // sealed like every other secret so a database dump alone reveals nothing.
  await db.schema
    .createTable('integration_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('integration_secrets').execute();
  await db.schema.dropTable('connectors').execute();
}
