import {
  type AgentRef,
  type InboxConversationView,
  type InboxEvent,
  type InboxVisitorTyping,
  inboxChannelOf,
  type LastMessagePreview,
  type MessageRole,
  parseChannel,
} from '@parley/webchat-protocol';
import { markdownPlainText } from '@parley/widget/markdown';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../../storage/schema.ts';
import { type Conversation, platformConversationView } from '../conversation.ts';
import type { Broadcaster } from '../conversations/broadcaster.ts';
import type { ConversationsService } from '../conversations/conversations.service.ts';
import type { FeedbackService } from '../feedback/feedback.service.ts';
import type { ReadMarks } from '../reads/read-marks.ts';

const PREVIEW_CHARS = 140;
/** Conversations read in one statement (well under every store's limit on bound parameters). */
const MAX_BATCH = 200;
/** How long changes gather before their entries are read and published: unnoticeable in a list, and a burst of
 * messages costs a few reads instead of four per message. */
const BATCH_WINDOW_MS = 50;

export interface InboxFeedDeps {
  db: Kysely<Database>;
  conversations: ConversationsService;
  reads: Pick<ReadMarks, 'unreadCounts'>;
  feedback: Pick<FeedbackService, 'csatOf'>;
  /** Server-side publish on the realtime engine (no history: the list is read over REST, then kept live). */
  publish(channel: string, data: string): Promise<void>;
  /**
   * Whether anybody may follow this inbox channel now; entries of a channel nobody follows are neither read nor
   * published (a publication without history reaches only current subscribers anyway). Only a node that knows every
   * subscriber can say no — one alone, with the memory broker; without it, every channel counts as followed.
   */
  followed?: (channel: string) => boolean;
  logger: Logger;
}

/**
 * The agents' live inbox (docs/routing.md "Live inbox"): the one place that builds what the inbox list shows of a
 * conversation (REST list and realtime event alike), and publishes it on the company's inbox channel when the
 * conversation changes. Every change that matters to the list ends with a complete message (a visitor's or an
 * agent's, or the system notice of a queue, assignment, handover, hand-back or close), so the webchat calls
 * `changed` after each complete it announces, and after a conversation is created.
 */
export class InboxFeed {
  constructor(private readonly deps: InboxFeedDeps) {}

  /** Conversations changed since the last batch, published together when the batch window ends. */
  private pending = new Set<string>();
  private batch: Promise<void> | undefined;

  /**
   * Publishes the conversation's current list entry soon (within BATCH_WINDOW_MS, with every other conversation
   * that changed meanwhile: one read of their entries instead of four statements per message). Each entry is read
   * after the change that caused it, so the list shows the latest state. A failure is logged (the list catches up on
   * its next load). Resolves once the entry is published. With `companyId`, nothing is done while nobody follows
   * the company's inbox channel (see InboxFeedDeps `followed`).
   */
  changed(conversationId: string, companyId?: string): Promise<void> {
    // A company nobody follows costs no inbox reads (a burst of visitors while its agents are away).
    if (companyId !== undefined && !this.followed(companyId)) return Promise.resolve();
    this.pending.add(conversationId);
    this.batch ??= new Promise<void>((resolve) => setTimeout(resolve, BATCH_WINDOW_MS).unref()).then(() =>
      this.publishPending(),
    );
    return this.batch;
  }

  private async publishPending(): Promise<void> {
    const ids = [...this.pending];
    this.pending = new Set();
    this.batch = undefined;
    for (let i = 0; i < ids.length; i += MAX_BATCH) await this.publishEntries(ids.slice(i, i + MAX_BATCH));
  }

  /** Whether the company's agents may be following its inbox channel (see InboxFeedDeps `followed`). */
  followed(companyId: string): boolean {
    return this.deps.followed?.(inboxChannelOf(companyId)) ?? true;
  }

  private async publishEntries(ids: string[]): Promise<void> {
    try {
      const conversations = (await this.deps.conversations.findMany(ids)).filter((c) =>
        this.followed(c.companyId),
      );
      const views = await this.views(conversations);
      await Promise.all(
        conversations.map((conversation, i) => {
          const event: InboxEvent = { version: 1, type: 'conversation', conversation: views[i]! };
          return this.deps.publish(inboxChannelOf(conversation.companyId), JSON.stringify(event));
        }),
      );
    } catch (err) {
      this.deps.logger.warn(
        { conversations: ids.length, err: err instanceof Error ? err.message : String(err) },
        'could not publish inbox updates',
      );
    }
  }

  /**
   * Tells the company's agents that the visitor is typing in this conversation (docs/routing.md "Live inbox"):
   * published outside history and stored nowhere, so it reaches only agents following the inbox channel now —
   * never the visitor's channel nor webhooks. The caller limits how often (realtime/publish-hook.ts).
   */
  async visitorTyping(conversation: Pick<Conversation, 'id' | 'companyId'>, at = new Date()): Promise<void> {
    const event = visitorTypingEvent(conversation.id, at);
    await this.deps.publish(inboxChannelOf(conversation.companyId), JSON.stringify(event));
  }

  /** The inbox entries of these conversations, in the same order. */
  async views(conversations: Conversation[]): Promise<InboxConversationView[]> {
    const ids = conversations.map((c) => c.id);
    const [unread, csat, last, assignees] = await Promise.all([
      this.deps.reads.unreadCounts('agent', ids),
      this.deps.feedback.csatOf(ids),
      this.lastMessages(ids),
      this.assignees(conversations),
    ]);
    return conversations.map((c) => {
      const unreadCount = unread.get(c.id) ?? 0;
      const assignee = c.assigneeId ? assignees.get(c.assigneeId) : undefined;
      return {
        ...platformConversationView(c),
        // The agent workspace's statuses (docs/design.md "Agent workspace"): a closed conversation is resolved.
        status: c.status === 'closed' ? 'resolved' : c.workspaceStatus,
        snoozed_until: c.status === 'closed' ? null : c.snoozedUntil,
        labels: c.labels,
        unread: unreadCount > 0,
        assignee: assignee ?? null,
        unread_count: unreadCount,
        csat: csat.get(c.id) ?? null,
        last_message: last.get(c.id) ?? null,
      };
    });
  }

  /** The assigned agents by id, as colleagues see them: their display name (users/display-name.ts's rule). */
  private async assignees(conversations: Conversation[]): Promise<Map<string, AgentRef>> {
    const ids = [...new Set(conversations.flatMap((c) => (c.assigneeId ? [c.assigneeId] : [])))];
    const found = new Map<string, AgentRef>();
    if (ids.length === 0) return found;
    const rows = await this.deps.db
      .selectFrom('portal_users')
      .select(['id', 'name', 'email'])
      .where('id', 'in', ids)
      .execute();
    for (const row of rows) found.set(row.id, { id: row.id, name: row.name ?? row.email.split('@')[0]! });
    return found;
  }

  private async lastMessages(ids: string[]): Promise<Map<string, LastMessagePreview>> {
    const found = new Map<string, LastMessagePreview>();
    if (ids.length === 0) return found;
    const rows = await this.deps.db
      .selectFrom('messages as m')
      .select(['m.conversation_id', 'm.role', 'm.blocks', 'm.created_at'])
      .where('m.conversation_id', 'in', ids)
      .where('m.status', '=', 'complete')
      // The preview is of the conversation itself; notes arrive as their own `note` event (notes/notes.service.ts).
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
    for (const row of rows) {
      found.set(row.conversation_id, {
        role: row.role as MessageRole,
        text: previewOf(row.blocks),
        created_at: row.created_at,
      });
    }
    return found;
  }
}

/** The inbox channel's `visitor_typing` event (docs/asyncapi.yaml "InboxVisitorTyping"). */
export const visitorTypingEvent = (conversationId: string, at: Date): InboxVisitorTyping => ({
  version: 1,
  event: 'visitor_typing',
  conversation_id: conversationId,
  at: at.toISOString(),
});

/**
 * Plain text of a message's blocks for a one-line preview: markdown as the reader sees it (the widget's own parser,
 * so `# Title` loses its marker and `Order #42` keeps its `#`), attachments by name.
 */
export function previewOf(blocks: string): string {
  let parsed: Array<{ type?: string; content?: unknown; name?: unknown; message?: unknown; label?: unknown }>;
  try {
    parsed = JSON.parse(blocks);
  } catch {
    return '';
  }
  const parts = parsed.map((b) => {
    if (b.type === 'markdown' && typeof b.content === 'string') return markdownPlainText(b.content);
    if (b.type === 'attachment' && typeof b.name === 'string') return `📎 ${b.name}`;
    if (b.type === 'error' && typeof b.message === 'string') return b.message;
    if (b.type === 'postback' && typeof b.label === 'string') return b.label;
    return '';
  });
  const text = parts.join(' ').replace(/\s+/g, ' ').trim();
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1)}…` : text;
}

/**
 * The webchat's broadcaster, plus: after each `complete` published on a conversation channel, that conversation's
 * inbox entry is published too (in the background: the message's own delivery never waits for the inbox).
 */
export function feedingInbox(broadcaster: Broadcaster, feed: InboxFeed): Broadcaster {
  return {
    publish: async (channel, envelope, options) => {
      await broadcaster.publish(channel, envelope, options);
      const target = envelope.operation === 'complete' ? parseChannel(channel) : undefined;
      if (target) void feed.changed(target.conversationId, target.companyId);
    },
  };
}
