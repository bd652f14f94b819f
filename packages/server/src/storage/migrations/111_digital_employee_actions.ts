import type { Kysely } from 'kysely';
import { ID, JSON_TEXT, TIMESTAMP } from '../columns.ts';

/**
 * Actions of digital employees (docs/design.md "Actions"): what an `openai` employee may call through an `http`
 * connector, offered to its model as tools. A name is unique per employee (the model calls it by name).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('digital_employee_actions')
    .addColumn('id', ID, (c) => c.primaryKey())
    .addColumn('company_id', ID, (c) => c.notNull().references('companies.id').onDelete('cascade'))
    .addColumn('digital_employee_id', ID, (c) =>
      c.notNull().references('digital_employees.id').onDelete('cascade'),
    )
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('parameters', JSON_TEXT, (c) => c.notNull())
    // No foreign key to connectors (another migration range): the service checks company and type on every write,
    // and a call to a connector deleted since reports the failure to the model.
    .addColumn('connector_id', ID, (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('status_text', 'text')
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('digital_employee_actions_name')
    .unique()
    .on('digital_employee_actions')
    .columns(['digital_employee_id', 'name'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('digital_employee_actions').execute();
}
