import type { Kysely } from 'kysely';
import { ID } from '../columns.ts';

/**
 * The durable line of user messages waiting for a digital-employee reply (webchat/conversations/reply-queue.ts).
 * A row is written in the same transaction as the user message, so an acknowledged message is never without its
 * place in line, whichever node dies. Times are milliseconds since the epoch on the database's clock, so nodes
 * with skewed clocks agree on when a lease has lapsed.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('reply_jobs')
    .addColumn('message_id', ID, (c) => c.primaryKey().references('messages.id').onDelete('cascade'))
    .addColumn('conversation_id', ID, (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('node_id', 'text')
    .addColumn('reply_message_id', ID)
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('queued_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('reply_jobs_line')
    .on('reply_jobs')
    .columns(['conversation_id', 'position'])
    .unique()
    .execute();
  await db.schema
    .createIndex('reply_jobs_state')
    .on('reply_jobs')
    .columns(['state', 'lease_expires_at'])
    .execute();
  await db.schema.createIndex('reply_jobs_node').on('reply_jobs').columns(['node_id']).execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('reply_jobs').execute();
}
