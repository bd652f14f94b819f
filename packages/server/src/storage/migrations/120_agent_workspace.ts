import type { Kysely } from 'kysely';
import { ID, JSON_TEXT, TIMESTAMP } from '../columns.ts';

/**
 * The agent workspace (webchat/workspace/): a conversation's working status while it is open (`open | pending |
 * snoozed`; `closed` stays the lifecycle's `status`), when a snoozed one wakes, the visitor's custom attributes (JSON
 * of what their token or SDK sent) and the page they started on; the company's labels on conversations and the
 * attributes as rows, so the inbox list can filter by either with an index; and the agents' mention notifications.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('conversations')
    .addColumn('workspace_status', 'text', (c) => c.notNull().defaultTo('open'))
    .execute();
  await db.schema.alterTable('conversations').addColumn('snoozed_until', TIMESTAMP).execute();
  await db.schema.alterTable('conversations').addColumn('visitor_attributes', JSON_TEXT).execute();
  await db.schema.alterTable('conversations').addColumn('page_url', 'text').execute();
  await db.schema.alterTable('conversations').addColumn('labels', JSON_TEXT).execute();
  await db.schema
    .createIndex('conversations_snoozed')
    .on('conversations')
    .columns(['workspace_status', 'snoozed_until'])
    .execute();

  await db.schema
    .createTable('conversation_labels')
    .addColumn('conversation_id', ID, (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('company_id', ID, (c) => c.notNull().references('companies.id').onDelete('cascade'))
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .addPrimaryKeyConstraint('conversation_labels_pk', ['conversation_id', 'label'])
    .execute();
  await db.schema
    .createIndex('conversation_labels_company')
    .on('conversation_labels')
    .columns(['company_id', 'label'])
    .execute();

  await db.schema
    .createTable('conversation_attributes')
    .addColumn('conversation_id', ID, (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    // The value as text (`true`, `42`, `gold`): what the inbox filter `attr.KEY=VALUE` compares with.
    .addColumn('value', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('conversation_attributes_pk', ['conversation_id', 'key'])
    .execute();
  await db.schema
    .createIndex('conversation_attributes_lookup')
    .on('conversation_attributes')
    .columns(['key', 'value'])
    .execute();

  await db.schema
    .createTable('mention_notifications')
    .addColumn('id', ID, (c) => c.primaryKey())
    .addColumn('company_id', ID, (c) => c.notNull().references('companies.id').onDelete('cascade'))
    .addColumn('user_id', ID, (c) => c.notNull().references('portal_users.id').onDelete('cascade'))
    .addColumn('conversation_id', ID, (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('message_id', ID, (c) => c.notNull())
    .addColumn('author_name', 'text')
    .addColumn('preview', 'text', (c) => c.notNull())
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .addColumn('read_at', TIMESTAMP)
    .execute();
  await db.schema
    .createIndex('mention_notifications_user')
    .on('mention_notifications')
    .columns(['user_id', 'read_at', 'created_at'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('mention_notifications').execute();
  await db.schema.dropTable('conversation_attributes').execute();
  await db.schema.dropTable('conversation_labels').execute();
  await db.schema.dropIndex('conversations_snoozed').execute();
  for (const column of ['labels', 'page_url', 'visitor_attributes', 'snoozed_until', 'workspace_status']) {
    await db.schema.alterTable('conversations').dropColumn(column).execute();
  }
}
