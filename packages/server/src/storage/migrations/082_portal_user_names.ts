import type { Kysely } from 'kysely';

/**
 * Portal users get a display name: what visitors see on an agent's messages and in "Dana joined the conversation"
 * (users/display-name.ts). Optional: a user without one is shown by the part of their email before the `@`, as
 * before this migration.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('portal_users').addColumn('name', 'text').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('portal_users').dropColumn('name').execute();
}
