import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { now } from '../../storage/columns.ts';
import { compileOnce } from '../../storage/compiled.ts';
import type { Database } from '../../storage/schema.ts';
import type { MessagesTable } from '../webchat.tables.ts';
import type { Block, MessageAuthor, MessageRole, MessageSnapshot, MessageStatus } from './message.ts';

export interface NewMessage {
  conversationId: string;
  role: MessageRole;
  author: MessageAuthor | null;
  status: MessageStatus;
  blocks: Block[];
  clientMessageId?: string | null;
  /** Sequence of the first envelope that will announce it (1). */
  sequence?: number;
}

export interface MessagePage {
  messages: MessageSnapshot[];
  /** Pass as `before` for the next (older) page; `null` when there is none. */
  next_before: string | null;
}

export const PAGE_DEFAULT = 50;
export const PAGE_MAX = 200;

/** Durable messages. Positions come from the conversation row, so two writers never share one (row lock). */
export class MessageStore {
  // The statements of every chat message and every streamed reply, compiled once (see compileOnce).
  private readonly takePosition;
  private readonly insertRow;
  private readonly updateRow;
  private readonly byClientMessageId;

  constructor(private readonly db: Kysely<Database>) {
    this.takePosition = compileOnce<{ id: string; at: string }>((arg) =>
      db
        .updateTable('conversations')
        .set((eb) => ({ last_position: eb('last_position', '+', 1), updated_at: arg('at') }))
        .where('id', '=', arg('id'))
        .returning('last_position'),
    );
    this.insertRow = compileOnce<MessagesTable>((arg) =>
      db.insertInto('messages').values({
        id: arg('id'),
        conversation_id: arg('conversation_id'),
        position: arg('position'),
        role: arg('role'),
        author_id: arg('author_id'),
        author_name: arg('author_name'),
        status: arg('status'),
        blocks: arg('blocks'),
        client_message_id: arg('client_message_id'),
        sequence: arg('sequence'),
        created_at: arg('created_at'),
        updated_at: arg('updated_at'),
      }),
    );
    this.updateRow = compileOnce<Pick<MessagesTable, 'id' | 'status' | 'blocks' | 'sequence' | 'updated_at'>>(
      (arg) =>
        db
          .updateTable('messages')
          .set({
            status: arg('status'),
            blocks: arg('blocks'),
            sequence: arg('sequence'),
            updated_at: arg('updated_at'),
          })
          .where('id', '=', arg('id')),
    );
    this.byClientMessageId = compileOnce<{ conversation_id: string; client_message_id: string }>((arg) =>
      db
        .selectFrom('messages')
        .selectAll()
        .where('conversation_id', '=', arg('conversation_id'))
        .where('client_message_id', '=', arg('client_message_id')),
    );
  }

  /** Inserts a message at the conversation's next position. */
  async insert(input: NewMessage): Promise<MessageSnapshot> {
    return (await this.insertAt(input)).snapshot;
  }

  /** `insert`, also telling the position the message took (its place in line for a reply). */
  async insertAt(input: NewMessage): Promise<{ snapshot: MessageSnapshot; position: number }> {
    const at = now();
    const id = randomUUID();
    const position = await this.db.transaction().execute(async (trx) => {
      const taken = await trx.executeQuery<{ last_position: number }>(
        this.takePosition({ id: input.conversationId, at }),
      );
      const position = taken.rows[0]?.last_position;
      if (position === undefined) throw new Error(`conversation ${input.conversationId} does not exist`);
      await trx.executeQuery(
        this.insertRow({
          id,
          conversation_id: input.conversationId,
          position,
          role: input.role,
          author_id: input.author?.id ?? null,
          author_name: input.author?.name ?? null,
          status: input.status,
          blocks: JSON.stringify(input.blocks),
          client_message_id: input.clientMessageId ?? null,
          sequence: input.sequence ?? 1,
          created_at: at,
          updated_at: at,
        }),
      );
      return position;
    });
    const snapshot: MessageSnapshot = {
      id,
      conversation_id: input.conversationId,
      role: input.role,
      author: input.author,
      status: input.status,
      blocks: input.blocks,
      client_message_id: input.clientMessageId ?? null,
      created_at: at,
      updated_at: at,
    };
    return { snapshot, position };
  }

  /** Writes the latest snapshot of a message (streaming progress or its completion). */
  async update(snapshot: MessageSnapshot, sequence: number): Promise<void> {
    await this.db.executeQuery(
      this.updateRow({
        id: snapshot.id,
        status: snapshot.status,
        blocks: JSON.stringify(snapshot.blocks),
        sequence,
        updated_at: snapshot.updated_at,
      }),
    );
  }

  async findByClientMessageId(
    conversationId: string,
    clientMessageId: string,
  ): Promise<MessageSnapshot | undefined> {
    const { rows } = await this.db.executeQuery<MessagesTable>(
      this.byClientMessageId({ conversation_id: conversationId, client_message_id: clientMessageId }),
    );
    return rows[0] && toSnapshot(rows[0]);
  }

  /** Newest first from `before` (exclusive), returned oldest first so a page reads top to bottom. */
  async page(
    conversationId: string,
    options: { limit?: number; beforePosition?: number },
  ): Promise<MessagePage> {
    const limit = Math.min(Math.max(options.limit ?? PAGE_DEFAULT, 1), PAGE_MAX);
    let query = this.db.selectFrom('messages').selectAll().where('conversation_id', '=', conversationId);
    if (options.beforePosition !== undefined) query = query.where('position', '<', options.beforePosition);
    const rows = await query
      .orderBy('position', 'desc')
      .limit(limit + 1)
      .execute();
    const more = rows.length > limit;
    const page = rows.slice(0, limit).reverse();
    return { messages: page.map(toSnapshot), next_before: more && page[0] ? page[0].id : null };
  }

  async positionOf(conversationId: string, messageId: string): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('messages')
      .select('position')
      .where('conversation_id', '=', conversationId)
      .where('id', '=', messageId)
      .executeTakeFirst();
    return row?.position;
  }

  /** Messages still `partial`: after a crash nobody will finish them. */
  async listPartial(
    options: { createdBefore?: string; limit?: number } = {},
  ): Promise<Array<{ snapshot: MessageSnapshot; sequence: number; companyId: string }>> {
    let query = this.db
      .selectFrom('messages')
      .innerJoin('conversations', 'conversations.id', 'messages.conversation_id')
      .selectAll('messages')
      .select('conversations.company_id as company_id')
      .where('messages.status', '=', 'partial');
    if (options.createdBefore) query = query.where('messages.created_at', '<', options.createdBefore);
    const rows = await query.limit(options.limit ?? 1000).execute();
    return rows.map((row) => ({
      snapshot: toSnapshot(row),
      sequence: row.sequence,
      companyId: row.company_id,
    }));
  }
}

export function toSnapshot(row: MessagesTable): MessageSnapshot {
  return {
    id: row.id,
    conversation_id: row.conversation_id,
    role: row.role as MessageRole,
    author:
      row.author_id !== null || row.author_name !== null
        ? { id: row.author_id ?? '', name: row.author_name ?? '' }
        : null,
    status: row.status as MessageStatus,
    blocks: JSON.parse(row.blocks),
    client_message_id: row.client_message_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
