import type { InboxStatus } from '@parley/webchat-protocol';
import type { VisitorPanelView } from '@parley/wire-types';
import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.ts';
import type { Conversation } from '../webchat/conversation.ts';
import { previewOf } from '../webchat/inbox-feed/inbox-feed.ts';

/** Earlier conversations of the same visitor shown in the panel, newest first. */
const PREVIOUS_LIMIT = 10;
/** Files of the conversation shown in the panel, newest first. */
const FILES_LIMIT = 50;

/** The visitor panel of the inbox (docs/design.md "Agent workspace"). */
export type VisitorPanel = VisitorPanelView;

/**
 * Everything the agent sees about the visitor beside the transcript: who they are (or "anonymous"), the attributes
 * the integrator sent, the channel and page, their earlier conversations (a verified visitor's from every session,
 * an anonymous one's from this session) and the files shared in this conversation, with fresh signed links.
 */
export async function visitorPanelOf(
  db: Kysely<Database>,
  conversation: Conversation,
  urlFor: (attachmentId: string) => string,
): Promise<VisitorPanel> {
  const visitor = conversation.visitor;
  const [channel, previous, files] = await Promise.all([
    conversation.channelId
      ? db
          .selectFrom('channels')
          .select(['id', 'name'])
          .where('id', '=', conversation.channelId)
          .executeTakeFirst()
      : Promise.resolve(undefined),
    previousConversations(db, conversation),
    db
      .selectFrom('attachments')
      .select(['id', 'name', 'content_type', 'size'])
      .where('conversation_id', '=', conversation.id)
      .orderBy('created_at', 'desc')
      .limit(FILES_LIMIT)
      .execute(),
  ]);
  return {
    sub: visitor?.id ?? null,
    anonymous: visitor === null,
    ...(visitor?.name ? { name: visitor.name } : {}),
    ...(visitor?.email ? { email: visitor.email } : {}),
    attributes: conversation.attributes,
    channel: channel ? { id: channel.id, name: channel.name } : null,
    ...(conversation.pageUrl ? { page_url: conversation.pageUrl } : {}),
    previous_conversations: previous,
    files: files.map((f) => ({
      id: f.id,
      name: f.name,
      content_type: f.content_type,
      size: Number(f.size),
      url: urlFor(f.id),
    })),
  };
}

async function previousConversations(
  db: Kysely<Database>,
  conversation: Conversation,
): Promise<VisitorPanel['previous_conversations']> {
  let query = db
    .selectFrom('conversations')
    .select(['id', 'created_at', 'status', 'workspace_status'])
    .where('company_id', '=', conversation.companyId)
    .where('id', '!=', conversation.id);
  query = conversation.visitor
    ? query.where('visitor_key', '=', conversation.visitor.key)
    : query.where('session_id', '=', conversation.sessionId).where('visitor_key', 'is', null);
  const rows = await query.orderBy('created_at', 'desc').limit(PREVIOUS_LIMIT).execute();
  if (rows.length === 0) return [];
  const last = await db
    .selectFrom('messages as m')
    .select(['m.conversation_id', 'm.blocks'])
    .where(
      'm.conversation_id',
      'in',
      rows.map((r) => r.id),
    )
    .where('m.status', '=', 'complete')
    .where('m.role', '!=', 'note')
    .where(({ eb, selectFrom }) =>
      eb(
        'm.position',
        '=',
        selectFrom('messages as x')
          .select((x) => x.fn.max('x.position').as('p'))
          .whereRef('x.conversation_id', '=', 'm.conversation_id')
          .where('x.status', '=', 'complete')
          .where('x.role', '!=', 'note'),
      ),
    )
    .execute();
  const previews = new Map(last.map((m) => [m.conversation_id, previewOf(m.blocks)]));
  return rows.map((r) => ({
    id: r.id,
    created_at: r.created_at,
    status: r.status === 'closed' ? 'resolved' : (r.workspace_status as InboxStatus),
    last_message_preview: previews.get(r.id) ?? null,
  }));
}
