import { type Kysely, sql } from 'kysely';
import { BOOL, ID, JSON_TEXT, TIMESTAMP } from '../columns.ts';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('digital_employees')
    .addColumn('id', ID, (c) => c.primaryKey())
    .addColumn('company_id', ID, (c) => c.notNull().references('companies.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('responder', 'text', (c) => c.notNull())
    // No foreign key to connectors: that table belongs to another migration range; the service checks company and
    // type on every write, and the responder reports a missing connector as `responder_misconfigured`.
    .addColumn('connector_id', ID)
    .addColumn('model', 'text')
    .addColumn('system_prompt', 'text')
    .addColumn('settings', JSON_TEXT, (c) => c.notNull().defaultTo('{}'))
    .addColumn('is_default', BOOL, (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .addColumn('updated_at', TIMESTAMP, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('digital_employees_company_time')
    .on('digital_employees')
    .columns(['company_id', 'created_at'])
    .execute();
  // At most one default per company, enforced by the database itself (partial index: SQLite and PostgreSQL).
  await db.schema
    .createIndex('digital_employees_one_default')
    .unique()
    .on('digital_employees')
    .column('company_id')
    .where(sql.ref('is_default'), '=', 1)
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('digital_employees').execute();
}
