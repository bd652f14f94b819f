import type { Kysely } from 'kysely';
import { ID, TIMESTAMP } from '../columns.ts';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('portal_users')
    .addColumn('id', ID, (c) => c.primaryKey())
    .addColumn('company_id', ID, (c) => c.notNull().references('companies.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .addColumn('last_login_at', TIMESTAMP)
    .execute();
  await db.schema.createIndex('portal_users_company').on('portal_users').column('company_id').execute();

  await db.schema
    .createTable('portal_sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', ID, (c) => c.notNull().references('portal_users.id').onDelete('cascade'))
    .addColumn('company_id', ID, (c) => c.notNull())
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .addColumn('expires_at', TIMESTAMP, (c) => c.notNull())
    .addColumn('idle_expires_at', TIMESTAMP, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('portal_sessions_user').on('portal_sessions').column('user_id').execute();
  await db.schema.createIndex('portal_sessions_expiry').on('portal_sessions').column('expires_at').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('portal_sessions').execute();
  await db.schema.dropTable('portal_users').execute();
}
