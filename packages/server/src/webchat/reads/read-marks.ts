import {
  channelOf,
  ENVELOPE_VERSION,
  type ReadEvent,
  type ReadMarks as ReadMarksData,
  type ReadSide,
} from '@parley/webchat-protocol';
import type { CompiledQuery, Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import { isUuid } from '../../companies/companies.service.ts';
import { now } from '../../storage/columns.ts';
import { compileOnce } from '../../storage/compiled.ts';
import type { Database } from '../../storage/schema.ts';
import type { Conversation } from '../conversation.ts';
import { messageNotFound } from '../webchat.errors.ts';

/** The messages a side has not read yet when they come after its mark: for visitors, everything but their own. */
const UNREAD_ROLES: Record<ReadSide, string[]> = {
  visitor: ['digital_employee', 'agent', 'system'],
  agent: ['user'],
};
const MARK_COLUMN = { visitor: 'visitor_read_position', agent: 'agent_read_position' } as const;

export interface ReadMarksDeps {
  db: Kysely<Database>;
  /** Publishes a read event on a conversation channel, outside its history (realtime/webchat-realtime.ts). */
  publish(channel: string, event: ReadEvent): Promise<void>;
  logger: Logger;
}

/**
 * Read state of conversations (docs/design.md "Feedback, CSAT and read state"): one mark per side — the position of
 * the last message the visitor (every device of theirs) and the agents have read — only ever moving forward.
 * `unread_count` is the other sides' messages after a side's mark; a visitor's own message moves their mark (in the
 * transaction that stores it). When the agents' mark moves, a history-less `read` event tells the visitor's open
 * clients ("Seen"); a client that was away finds both marks in its next subscribe result (`read_marks`), so channel
 * history keeps exactly one entry per message (docs/architecture.md "Flow of a message", step 8).
 */
export class ReadMarks {
  /** Moves one side's mark forward, compiled once per side: the visitor's runs with every message it sends. */
  private readonly advanceMark: Record<ReadSide, (args: { id: string; position: number }) => CompiledQuery>;

  constructor(private readonly deps: ReadMarksDeps) {
    const advance = (side: ReadSide) =>
      compileOnce<{ id: string; position: number }>((arg) =>
        deps.db
          .updateTable('conversations')
          .set({ [MARK_COLUMN[side]]: arg('position') })
          .where('id', '=', arg('id'))
          .where(MARK_COLUMN[side], '<', arg('position')),
      );
    this.advanceMark = { visitor: advance('visitor'), agent: advance('agent') };
  }

  /** The visitor read up to `messageId` (a message of this conversation; else `message_not_found`). */
  async markVisitorRead(conversation: Conversation, messageId: string): Promise<void> {
    const target = await this.messageAt(conversation.id, messageId);
    if (!target) throw messageNotFound();
    await this.advance(this.deps.db, conversation.id, 'visitor', target.position);
  }

  /**
   * An agent read up to `messageId`, or up to the latest message when none is named. Answers the marks now; when
   * the agents' mark moved, the visitor's clients learn it live.
   */
  async markAgentRead(conversation: Conversation, messageId?: string): Promise<ReadMarksData> {
    const target = messageId
      ? await this.messageAt(conversation.id, messageId)
      : await this.latestMessage(conversation.id);
    if (messageId && !target) throw messageNotFound();
    if (target && (await this.advance(this.deps.db, conversation.id, 'agent', target.position))) {
      const event: ReadEvent = {
        version: ENVELOPE_VERSION,
        event: 'read',
        reader: 'agent',
        position: target.position,
        message_id: target.id,
        read_at: now(),
      };
      // The mark is stored; a client that misses the event finds it in its next subscribe result.
      await this.deps
        .publish(channelOf(conversation.companyId, conversation.id), event)
        .catch((err) =>
          this.deps.logger.warn(
            { err: { message: (err as Error).message }, conversationId: conversation.id },
            'could not announce a read mark',
          ),
        );
    }
    return this.marksOf(conversation.id);
  }

  /** Moves the visitor's mark to their own new message, in the transaction that stores it. */
  async visitorSent(trx: Transaction<Database>, conversationId: string, position: number): Promise<void> {
    await this.advance(trx, conversationId, 'visitor', position);
  }

  /** Both marks of a conversation (the `read_marks` of subscribe results). */
  async marksOf(conversationId: string): Promise<ReadMarksData> {
    const row = await this.deps.db
      .selectFrom('conversations')
      .select(['visitor_read_position', 'agent_read_position'])
      .where('id', '=', conversationId)
      .executeTakeFirst();
    return { visitor: Number(row?.visitor_read_position ?? 0), agent: Number(row?.agent_read_position ?? 0) };
  }

  /** `unread_count` of each conversation for `side` (conversations with none are 0). */
  async unreadCounts(side: ReadSide, conversationIds: readonly string[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>(conversationIds.map((id) => [id, 0]));
    if (conversationIds.length === 0) return counts;
    const rows = await this.deps.db
      .selectFrom('messages as m')
      .innerJoin('conversations as c', 'c.id', 'm.conversation_id')
      .select(['m.conversation_id', (eb) => eb.fn.countAll().as('n')])
      .where('m.conversation_id', 'in', [...conversationIds])
      .where('m.role', 'in', UNREAD_ROLES[side])
      .whereRef('m.position', '>', `c.${MARK_COLUMN[side]}`)
      .groupBy('m.conversation_id')
      .execute();
    for (const row of rows) counts.set(row.conversation_id, Number(row.n));
    return counts;
  }

  /** Moves a mark forward only (a late or repeated read never moves it back); true when it moved. */
  private async advance(
    db: Kysely<Database>,
    conversationId: string,
    side: ReadSide,
    position: number,
  ): Promise<boolean> {
    const result = await db.executeQuery(this.advanceMark[side]({ id: conversationId, position }));
    return Number(result.numAffectedRows ?? 0) > 0;
  }

  private async messageAt(conversationId: string, messageId: string) {
    if (!isUuid(messageId)) return undefined;
    return (
      this.deps.db
        .selectFrom('messages')
        .select(['id', 'position'])
        .where('conversation_id', '=', conversationId)
        .where('id', '=', messageId.toLowerCase())
        // Read marks are published on the conversation channel: a note (agents only) is never named there.
        .where('role', '!=', 'note')
        .executeTakeFirst()
    );
  }

  private latestMessage(conversationId: string) {
    return this.deps.db
      .selectFrom('messages')
      .select(['id', 'position'])
      .where('conversation_id', '=', conversationId)
      .where('role', '!=', 'note')
      .orderBy('position', 'desc')
      .limit(1)
      .executeTakeFirst();
  }
}
