import { type Static, Type } from '@sinclair/typebox';
import type { AttachmentsService } from '../attachments/attachments.service.ts';
import type { LiveSnapshots } from '../conversations/live-snapshots.ts';
import type { FeedbackService } from '../feedback/feedback.service.ts';
import type { MessagePage, MessageStore, ReadAudience } from '../messages/message-store.ts';
import { UUID_PATTERN } from '../uuid-pattern.ts';
import { invalidCursor } from '../webchat.errors.ts';

/** What reading a page of messages takes: the stored page, the live overlay, ratings and attachment links. */
export interface MessagePageDeps {
  messages: Pick<MessageStore, 'positionOf' | 'page'>;
  live: Pick<LiveSnapshots, 'overlay'>;
  feedback: Pick<FeedbackService, 'feedbackOf'>;
  attachments: Pick<AttachmentsService, 'present'>;
}

/** The query of a conversation's message history, the same on the SDK and the platform routes. */
export const MessagePageQuery = Type.Object({
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$' })),
  before: Type.Optional(Type.String({ pattern: UUID_PATTERN })),
});

/**
 * One page of a conversation's messages as clients read them: older than the message `before` (which must be
 * one of this conversation's), with replies still streaming shown as they are now rather than as last written, and
 * rated messages with their `feedback`, attachments with fresh links.
 */
export async function readMessagePage(
  deps: MessagePageDeps,
  conversationId: string,
  query: Static<typeof MessagePageQuery>,
  audience: ReadAudience = {},
): Promise<MessagePage> {
  let beforePosition: number | undefined;
  if (query.before) {
    beforePosition = await deps.messages.positionOf(conversationId, query.before, audience);
    if (beforePosition === undefined) throw invalidCursor();
  }
  const limit = query.limit === undefined ? undefined : Number(query.limit);
  // Notes (agents only) only when the caller is an agent's read: the SDK's passes no audience.
  const page = await deps.messages.page(conversationId, { limit, beforePosition, ...audience });
  // Rated messages show the visitor's rating (docs/design.md "Feedback, CSAT and read state").
  const ratings = await deps.feedback.feedbackOf(page.messages.map((m) => m.id));
  const messages = deps.live
    .overlay(page.messages)
    .map((m) => (ratings.has(m.id) ? { ...m, feedback: ratings.get(m.id)! } : m))
    // Attachment blocks with a freshly signed `url` on every read (docs/design.md "Attachments").
    .map((m) => deps.attachments.present(m));
  return { messages, next_before: page.next_before };
}
