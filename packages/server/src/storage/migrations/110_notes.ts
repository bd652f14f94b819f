import type { Kysely } from 'kysely';

/**
 * Internal notes (docs/design.md "Internal notes"): a note is a message of the conversation with `role = 'note'`,
 * so it takes a position and sorts in the transcript like any message. What only notes have — what kind of author
 * wrote it and whom it mentions — is one JSON column, null on every other message.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('messages').addColumn('note_meta', 'text').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('messages').dropColumn('note_meta').execute();
}
