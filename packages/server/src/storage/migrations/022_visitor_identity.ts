import type { Kysely } from 'kysely';
import { TIMESTAMP } from '../columns.ts';

/**
 * Verified visitor identity (webchat/identity/): each channel's identity mode and its sealed identity secrets (the
 * current one and, for 24 h after a rotation, the previous one), and on each conversation the visitor it belongs to
 * — `visitor_key`, an opaque key of (channel, the integrator's user id) — with the id, name and email the visitor's
 * latest token carried.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('channels')
    .addColumn('identity_mode', 'text', (c) => c.notNull().defaultTo('off'))
    .execute();
  await db.schema.alterTable('channels').addColumn('identity_secret', 'text').execute();
  await db.schema.alterTable('channels').addColumn('identity_previous_secret', 'text').execute();
  await db.schema.alterTable('channels').addColumn('identity_previous_until', TIMESTAMP).execute();

  await db.schema.alterTable('conversations').addColumn('visitor_key', 'text').execute();
  await db.schema.alterTable('conversations').addColumn('visitor_id', 'text').execute();
  await db.schema.alterTable('conversations').addColumn('visitor_name', 'text').execute();
  await db.schema.alterTable('conversations').addColumn('visitor_email', 'text').execute();
  await db.schema
    .createIndex('conversations_visitor')
    .on('conversations')
    .columns(['company_id', 'visitor_key', 'created_at'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('conversations_visitor').execute();
  for (const column of ['visitor_email', 'visitor_name', 'visitor_id', 'visitor_key'])
    await db.schema.alterTable('conversations').dropColumn(column).execute();
  for (const column of [
    'identity_previous_until',
    'identity_previous_secret',
    'identity_secret',
    'identity_mode',
  ])
    await db.schema.alterTable('channels').dropColumn(column).execute();
}
