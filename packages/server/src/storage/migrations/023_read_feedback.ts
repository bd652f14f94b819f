import type { Kysely } from 'kysely';
import { ID, TIMESTAMP } from '../columns.ts';

/**
 * Read state, feedback and CSAT (webchat/reads/, webchat/feedback/): each conversation's read marks — the position
 * of the last message the visitor side and the agent side have read — and the visitors' ratings of messages and of
 * closed conversations, each in a table of its own.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('conversations')
    .addColumn('visitor_read_position', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('conversations')
    .addColumn('agent_read_position', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('message_feedback')
    .addColumn('message_id', ID, (c) => c.primaryKey().references('messages.id').onDelete('cascade'))
    .addColumn('conversation_id', ID, (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('company_id', ID, (c) => c.notNull().references('companies.id').onDelete('cascade'))
    .addColumn('rating', 'text', (c) => c.notNull())
    .addColumn('comment', 'text')
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .addColumn('updated_at', TIMESTAMP, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('message_feedback_conversation')
    .on('message_feedback')
    .columns(['conversation_id'])
    .execute();
  await db.schema
    .createIndex('message_feedback_company')
    .on('message_feedback')
    .columns(['company_id'])
    .execute();

  await db.schema
    .createTable('conversation_csat')
    .addColumn('conversation_id', ID, (c) =>
      c.primaryKey().references('conversations.id').onDelete('cascade'),
    )
    .addColumn('company_id', ID, (c) => c.notNull().references('companies.id').onDelete('cascade'))
    .addColumn('score', 'integer', (c) => c.notNull())
    .addColumn('comment', 'text')
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .addColumn('updated_at', TIMESTAMP, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('conversation_csat_company')
    .on('conversation_csat')
    .columns(['company_id'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('conversation_csat').execute();
  await db.schema.dropTable('message_feedback').execute();
  await db.schema.alterTable('conversations').dropColumn('agent_read_position').execute();
  await db.schema.alterTable('conversations').dropColumn('visitor_read_position').execute();
}
