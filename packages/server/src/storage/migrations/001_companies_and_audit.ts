import type { Kysely } from 'kysely';
import { ID, JSON_TEXT, TIMESTAMP } from '../columns.ts';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('companies')
    .addColumn('id', ID, (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('allowed_origins', JSON_TEXT, (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('audit_events')
    .addColumn('id', ID, (c) => c.primaryKey())
    .addColumn('company_id', ID)
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('actor', 'text')
    .addColumn('subject', 'text')
    .addColumn('ip', 'text')
    .addColumn('details', JSON_TEXT, (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('audit_events_company_time')
    .on('audit_events')
    .columns(['company_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('audit_events_type_time')
    .on('audit_events')
    .columns(['type', 'created_at'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('audit_events').execute();
  await db.schema.dropTable('companies').execute();
}
