import type { Kysely } from 'kysely';
import { ID, JSON_TEXT, TIMESTAMP } from '../columns.ts';

/**
 * Routing (webchat/routing/): a conversation waits in its company's queue from `queued_at` (the visitor asked for a
 * person) until an agent is assigned (`assignee_id`, `assigned_at`); agents say whether they take conversations
 * (`agent_availability`, with when each was last given one: round-robin picks the least recently assigned); the
 * company's routing settings hold the per-agent capacity and the business-hours schedule (JSON, null = always open).
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('conversations').addColumn('queued_at', TIMESTAMP).execute();
  await db.schema.alterTable('conversations').addColumn('assignee_id', ID).execute();
  await db.schema.alterTable('conversations').addColumn('assigned_at', TIMESTAMP).execute();
  await db.schema
    .createIndex('conversations_queue')
    .on('conversations')
    .columns(['company_id', 'queued_at'])
    .execute();
  await db.schema
    .createIndex('conversations_assignee')
    .on('conversations')
    .columns(['assignee_id', 'status'])
    .execute();

  await db.schema
    .createTable('agent_availability')
    .addColumn('user_id', ID, (c) => c.primaryKey().references('portal_users.id').onDelete('cascade'))
    .addColumn('company_id', ID, (c) => c.notNull().references('companies.id').onDelete('cascade'))
    .addColumn('availability', 'text', (c) => c.notNull())
    .addColumn('last_assigned_at', TIMESTAMP)
    .addColumn('updated_at', TIMESTAMP, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('agent_availability_company')
    .on('agent_availability')
    .columns(['company_id', 'availability'])
    .execute();

  await db.schema
    .createTable('company_routing')
    .addColumn('company_id', ID, (c) => c.primaryKey().references('companies.id').onDelete('cascade'))
    .addColumn('agent_capacity', 'integer', (c) => c.notNull())
    .addColumn('business_hours', JSON_TEXT)
    .addColumn('updated_at', TIMESTAMP, (c) => c.notNull())
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('company_routing').execute();
  await db.schema.dropTable('agent_availability').execute();
  await db.schema.dropIndex('conversations_assignee').execute();
  await db.schema.dropIndex('conversations_queue').execute();
  await db.schema.alterTable('conversations').dropColumn('assigned_at').execute();
  await db.schema.alterTable('conversations').dropColumn('assignee_id').execute();
  await db.schema.alterTable('conversations').dropColumn('queued_at').execute();
}
