import { randomUUID } from 'node:crypto';
import {
  type InboxMention,
  inboxChannelOf,
  type MentionNotification,
  type NoteView,
} from '@parley/webchat-protocol';
import type { Kysely } from 'kysely';
import { now } from '../storage/columns.ts';
import type { Database } from '../storage/schema.ts';

const PREVIEW_CHARS = 140;
/** Unread mentions listed at most (the newest): an inbox badge, not an archive. */
const LIST_LIMIT = 100;

export interface MentionsDeps {
  db: Kysely<Database>;
  /** Server-side publish without history on the realtime engine (the inbox channel is live only). */
  publishLive(channel: string, data: string): Promise<void>;
  logger: { warn(obj: object, msg: string): void };
}

/**
 * Notifications of @mentions in notes (docs/design.md "Agent workspace"): each mentioned agent (but the note's own
 * author) gets a stored notification, unread until they mark it read, and a live `mention` event on the company's
 * inbox channel naming them. The notes core (webchat/notes/) has already checked that every mention is a portal
 * user of the company.
 */
export class MentionsService {
  constructor(private readonly deps: MentionsDeps) {}

  async notify(companyId: string, note: NoteView): Promise<void> {
    const recipients = note.mentions.filter((id) => id !== note.author.id);
    if (recipients.length === 0) return;
    const text = note.text.replace(/\s+/g, ' ').trim();
    const preview = text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1)}…` : text;
    const at = now();
    const rows = recipients.map((userId) => ({
      id: randomUUID(),
      company_id: companyId,
      user_id: userId,
      conversation_id: note.conversation_id,
      message_id: note.id,
      author_name: note.author.name || null,
      preview,
      created_at: at,
      read_at: null,
    }));
    await this.deps.db.insertInto('mention_notifications').values(rows).execute();
    await Promise.all(
      rows.map((row) => {
        const event: InboxMention = {
          version: 1,
          event: 'mention',
          user_id: row.user_id,
          conversation_id: row.conversation_id,
          notification: notificationView(row),
        };
        // Live only: the notification is stored; an agent who misses the event sees it on the next list.
        return this.deps
          .publishLive(inboxChannelOf(companyId), JSON.stringify(event))
          .catch((err) =>
            this.deps.logger.warn(
              { conversationId: note.conversation_id, err: err instanceof Error ? err.message : String(err) },
              'could not announce a mention on the inbox channel',
            ),
          );
      }),
    );
  }

  /** The agent's unread mentions, newest first, and how many there are. */
  async unread(companyId: string, userId: string): Promise<MentionNotification[]> {
    const rows = await this.deps.db
      .selectFrom('mention_notifications')
      .selectAll()
      .where('company_id', '=', companyId)
      .where('user_id', '=', userId)
      .where('read_at', 'is', null)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(LIST_LIMIT)
      .execute();
    return rows.map(notificationView);
  }

  /** Marks the agent's mentions read: those named (unknown or others' ids change nothing), or all. How many. */
  async markRead(companyId: string, userId: string, ids?: readonly string[]): Promise<number> {
    if (ids !== undefined && ids.length === 0) return 0;
    let query = this.deps.db
      .updateTable('mention_notifications')
      .set({ read_at: now() })
      .where('company_id', '=', companyId)
      .where('user_id', '=', userId)
      .where('read_at', 'is', null);
    if (ids !== undefined) query = query.where('id', 'in', [...ids]);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows);
  }
}

function notificationView(row: {
  id: string;
  conversation_id: string;
  message_id: string;
  author_name: string | null;
  preview: string;
  created_at: string;
  read_at: string | null;
}): MentionNotification {
  return {
    id: row.id,
    conversation_id: row.conversation_id,
    message_id: row.message_id,
    author_name: row.author_name,
    preview: row.preview,
    created_at: row.created_at,
    read_at: row.read_at,
  };
}
