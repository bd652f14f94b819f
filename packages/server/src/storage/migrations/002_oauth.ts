import { type Kysely, sql } from 'kysely';
import { ID, JSON_TEXT, TIMESTAMP } from '../columns.ts';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('api_clients')
    .addColumn('id', ID, (c) => c.primaryKey())
    .addColumn('company_id', ID, (c) => c.notNull().references('companies.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('scopes', JSON_TEXT, (c) => c.notNull())
    .addColumn('secret_digest', 'text', (c) => c.notNull())
    .addColumn('pepper_version', 'integer', (c) => c.notNull())
    .addColumn('secret_hint', 'text', (c) => c.notNull())
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .addColumn('last_used_at', TIMESTAMP)
    .addColumn('deleted_at', TIMESTAMP)
    .execute();
  await db.schema
    .createIndex('api_clients_company')
    .on('api_clients')
    .columns(['company_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('oauth_peppers')
    .addColumn('version', 'integer', (c) => c.primaryKey())
    .addColumn('sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('oauth_signing_keys')
    .addColumn('kid', ID, (c) => c.primaryKey())
    .addColumn('alg', 'text', (c) => c.notNull())
    .addColumn('public_jwk', JSON_TEXT, (c) => c.notNull())
    .addColumn('private_key', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .addColumn('retired_at', TIMESTAMP)
    .execute();
  // At most one active key, also when several nodes start at once or two rotations race (same SQL on both DBs).
  await sql`create unique index oauth_signing_keys_one_active on oauth_signing_keys (status) where status = 'active'`.execute(
    db,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('oauth_signing_keys').execute();
  await db.schema.dropTable('oauth_peppers').execute();
  await db.schema.dropTable('api_clients').execute();
}
