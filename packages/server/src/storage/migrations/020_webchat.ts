import type { Kysely } from 'kysely';
import { ID, JSON_TEXT, TIMESTAMP } from '../columns.ts';

// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('channels')
    .addColumn('id', ID, (c) => c.primaryKey())
    .addColumn('company_id', ID, (c) => c.notNull().references('companies.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    // No foreign key: digital employees are created by a later migration range (030–039).
    .addColumn('digital_employee_id', ID, (c) => c.notNull())
    .addColumn('allowed_origins', JSON_TEXT, (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('channels_company')
    .on('channels')
    .columns(['company_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('conversations')
    .addColumn('id', ID, (c) => c.primaryKey())
    .addColumn('company_id', ID, (c) => c.notNull().references('companies.id').onDelete('cascade'))
    .addColumn('channel_id', ID, (c) => c.references('channels.id').onDelete('set null'))
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('digital_employee_id', ID, (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('handled_by', 'text', (c) => c.notNull())
    .addColumn('agent_name', 'text')
    .addColumn('last_position', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .addColumn('updated_at', TIMESTAMP, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('conversations_session')
    .on('conversations')
    .columns(['company_id', 'session_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('conversations_company')
    .on('conversations')
    .columns(['company_id', 'updated_at'])
    .execute();

  await db.schema
    .createTable('messages')
    .addColumn('id', ID, (c) => c.primaryKey())
    .addColumn('conversation_id', ID, (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('author_id', 'text')
    .addColumn('author_name', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('blocks', JSON_TEXT, (c) => c.notNull())
    .addColumn('client_message_id', 'text')
    .addColumn('sequence', 'integer', (c) => c.notNull())
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .addColumn('updated_at', TIMESTAMP, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('messages_position')
    .on('messages')
    .columns(['conversation_id', 'position'])
    .unique()
    .execute();
  // The deduplication key of SendMessage retries (NULLs are distinct in both databases).
  await db.schema
    .createIndex('messages_client_message_id')
    .on('messages')
    .columns(['conversation_id', 'client_message_id'])
    .unique()
    .execute();
  await db.schema.createIndex('messages_status').on('messages').columns(['status']).execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('messages').execute();
  await db.schema.dropTable('conversations').execute();
  await db.schema.dropTable('channels').execute();
}
