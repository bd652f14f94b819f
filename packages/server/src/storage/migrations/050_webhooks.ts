import type { Kysely } from 'kysely';
import { BOOL, ID, JSON_TEXT, TIMESTAMP } from '../columns.ts';

/**
 * Event webhooks (src/webhooks/): endpoints with their sealed secrets, the event outbox written in the same
 * transaction as each change, and one delivery per event and subscribed endpoint, claimed by the dispatcher with
 * a lease in the store (`next_attempt_at`, database clock) so one node sends each.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', ID, (c) => c.primaryKey())
    .addColumn('company_id', ID, (c) => c.notNull().references('companies.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', JSON_TEXT, (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    .addColumn('previous_secret_sealed', 'text')
    .addColumn('previous_secret_expires_ms', 'bigint')
    .addColumn('secret_version', 'integer', (c) => c.notNull())
    .addColumn('enabled', BOOL, (c) => c.notNull())
    .addColumn('failing_since_ms', 'bigint')
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .addColumn('disabled_at', TIMESTAMP)
    .execute();
  await db.schema
    .createIndex('webhook_endpoints_company')
    .on('webhook_endpoints')
    .columns(['company_id', 'enabled'])
    .execute();

  await db.schema
    .createTable('webhook_events')
    .addColumn('id', ID, (c) => c.primaryKey())
    .addColumn('company_id', ID, (c) => c.notNull().references('companies.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('body', JSON_TEXT, (c) => c.notNull())
    .addColumn('created_ms', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', ID, (c) => c.primaryKey())
    .addColumn('endpoint_id', ID, (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('event_id', ID, (c) => c.notNull().references('webhook_events.id').onDelete('cascade'))
    .addColumn('company_id', ID, (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('last_status_code', 'integer')
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('lease_owner', 'text')
    .addColumn('window_start_ms', 'bigint', (c) => c.notNull())
    .addColumn('created_ms', 'bigint', (c) => c.notNull())
    .execute();
  // The dispatcher's claim: due pending deliveries, oldest due first.
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute();
  // The deliveries listing of one endpoint, newest first.
  await db.schema
    .createIndex('webhook_deliveries_endpoint')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'created_ms'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_event')
    .on('webhook_deliveries')
    .column('event_id')
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_events').execute();
  await db.schema.dropTable('webhook_endpoints').execute();
}
