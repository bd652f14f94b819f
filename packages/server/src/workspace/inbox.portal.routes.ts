import {
  ATTRIBUTE_LIMITS,
  INTERACTIVE_LIMITS,
  inboxChannelOf,
  readHandoverSummaryNote,
} from '@parley/webchat-protocol';
import type {
  HandoverSummaryView,
  InboxConversationDetail,
  InboxConversationPage,
  RealtimeGrantView,
} from '@parley/wire-types';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { pageLimit } from '../http/offset-page.ts';
import { sameHostOrigin, websocketUrlOf } from '../http/public-url.ts';
import type { App } from '../http/types.ts';
import type { IdempotencyKeys } from '../idempotency/idempotency-keys.ts';
import { answerIdempotently, IdempotencyKeyHeaders } from '../idempotency/idempotent-post.ts';
import { displayNameOf } from '../users/display-name.ts';
import { actorOf, companyOf, sessionOf } from '../users/portal-session.ts';
import type { PortalUser } from '../users/users.service.ts';
import {
  type AgentAttachmentDeps,
  registerPortalAttachmentRoute,
} from '../webchat/attachments/attachments.routes.ts';
import type { AttachmentsService } from '../webchat/attachments/attachments.service.ts';
import { type Conversation, channelOf, platformConversationView } from '../webchat/conversation.ts';
import type {
  AgentMessageInput,
  ConversationCommands,
} from '../webchat/conversations/conversation-commands.ts';
import type { InboxFeed } from '../webchat/inbox-feed/inbox-feed.ts';
import { type MessageAuthor, textOf } from '../webchat/messages/message.ts';
import type { MessageStore } from '../webchat/messages/message-store.ts';
import type { ReadMarks } from '../webchat/reads/read-marks.ts';
import {
  CONNECTION_TOKEN_TTL_SECONDS,
  type RealtimeTokenSigner,
  SUBSCRIPTION_TOKEN_TTL_SECONDS,
} from '../webchat/realtime/tokens.ts';
import { type MessagePageDeps, readMessagePage } from '../webchat/routes/message-page.ts';
import {
  decodeInboxCursor,
  encodeInboxCursor,
  inboxStatusOf,
  LABEL_LIMITS,
  type WorkspaceService,
} from './workspace.service.ts';

const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
/**
 * The inbox list's filters (docs/design.md "Agent workspace"): a view, a status (`closed` is the older name of
 * `resolved`), a label and any number of `attr.KEY=VALUE` visitor attributes (at most 5).
 */
const ListQuery = Type.Object(
  {
    view: Type.Optional(
      Type.Union([
        Type.Literal('mine'),
        Type.Literal('unassigned'),
        Type.Literal('queued'),
        Type.Literal('all'),
      ]),
    ),
    status: Type.Optional(
      Type.Union([
        Type.Literal('open'),
        Type.Literal('pending'),
        Type.Literal('snoozed'),
        Type.Literal('resolved'),
        Type.Literal('closed'),
      ]),
    ),
    label: Type.Optional(Type.String({ minLength: 1, maxLength: LABEL_LIMITS.length })),
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$' })),
    cursor: Type.Optional(Type.String({ maxLength: 300 })),
  },
  {
    additionalProperties: false,
    patternProperties: {
      [`^attr\\.[A-Za-z0-9_][A-Za-z0-9_.-]{0,${ATTRIBUTE_LIMITS.keyLength - 1}}$`]: Type.String({
        maxLength: ATTRIBUTE_LIMITS.valueLength,
      }),
    },
    maxProperties: 12,
  },
);
const Reply = Type.Object(
  {
    content: Type.String({ maxLength: 100_000 }),
    /** Labels of quick replies offered under the reply (docs/design.md "Interactive blocks"); ids are generated. */
    quick_replies: Type.Optional(
      Type.Array(Type.String({ maxLength: INTERACTIVE_LIMITS.labelLength }), {
        maxItems: INTERACTIVE_LIMITS.options,
      }),
    ),
    // Files the agent uploaded first (POST …/attachments), shown after the text (docs/design.md "Attachments").
    attachment_ids: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 20 })),
  },
  { additionalProperties: false },
);

/**
 * The agent's reply as blocks: its text, the files it attaches, then the quick replies the inbox form lists one
 * label per line (blank lines skipped; ids `option-1`, `option-2`, … in order, unique within the message as
 * postbacks need).
 */
function replyBlocks(body: {
  content: string;
  quick_replies?: string[];
  attachment_ids?: string[];
}): AgentMessageInput['blocks'] {
  const labels = (body.quick_replies ?? []).map((l) => l.trim()).filter((l) => l.length > 0);
  return [
    { type: 'markdown', content: body.content.trim() },
    ...(body.attachment_ids ?? []).map((id) => ({ type: 'attachment' as const, attachment_id: id })),
    ...(labels.length > 0
      ? [
          {
            type: 'quick_replies' as const,
            options: labels.map((label, i) => ({ id: `option-${i + 1}`, label })),
          },
        ]
      : []),
  ];
}
const ReadBody = Type.Optional(
  Type.Object(
    { message_id: Type.Optional(Type.String({ maxLength: 100 })) },
    { additionalProperties: false },
  ),
);

/** Realtime subjects of portal users are namespaced so they can never equal a visitor's X-Session-Id. */
const realtimeSubject = (userId: string) => `portal-user:${userId}`;

/** The agent as visitors see them on their messages: their display name (users/display-name.ts), as routing shows it. */
const agentAuthor = (user: PortalUser): MessageAuthor => ({
  id: `user:${user.id}`,
  name: displayNameOf(user),
});

/**
 * The agent inbox (admins and agents): the company's conversations, their transcripts, and the agent actions
 * (take over, reply, hand back), all through the webchat's ConversationsService / MessageStore / ConversationEngine.
 * Live updates come from the realtime engine: the browser subscribes to the conversation channel with tokens
 * signed here (subject `portal-user:<id>`, so the publish hook never accepts its publications as a visitor's).
 */
/** The webchat's services the inbox uses, each narrowed to its calls (app.ts picks them by name). */
export interface InboxPortalDeps extends MessagePageDeps {
  /** What agents do to conversations (packages/server/src/webchat/conversations/conversation-commands.ts). */
  commands: Pick<ConversationCommands, 'find' | 'handover' | 'handback' | 'close' | 'post'>;
  /** A page of the transcript, and the newest hand-over summary note. */
  messages: MessagePageDeps['messages'] & Pick<MessageStore, 'latestNoteOfKind'>;
  /** Attachment blocks and links of the transcript and the visitor panel, and the agents' uploads. */
  attachments: MessagePageDeps['attachments'] &
    AgentAttachmentDeps['attachments'] &
    Pick<AttachmentsService, 'urlFor'>;
  uploadQuota: AgentAttachmentDeps['uploadQuota'];
  /** Idempotency-Key of the agents' message posts (idempotency/). */
  idempotency: IdempotencyKeys;
  /** The list entries agents see (the live inbox publishes the same). */
  inbox: Pick<InboxFeed, 'views'>;
  reads: Pick<ReadMarks, 'marksOf' | 'markAgentRead'>;
  signer: Pick<RealtimeTokenSigner, 'connectionToken' | 'subscriptionToken'>;
  /** The base URL to hand this request's client (packages/server/src/http/public-url.ts). */
  publicUrlFor(request: FastifyRequest): string;
}

export function registerInboxPortalRoutes(
  app: App,
  webchat: InboxPortalDeps,
  workspace: Pick<WorkspaceService, 'list' | 'visitorPanel'>,
): void {
  const any = { portalAccess: 'any' as const };
  const load = (request: FastifyRequest<{ Params: { id: string } }>): Promise<Conversation> =>
    webchat.commands.find(companyOf(request), request.params.id);
  const actor = (request: FastifyRequest) => ({ id: actorOf(request), ip: request.ip });

  /** The agents' view: the visitor, unread count, CSAT and last message (one place: the live inbox's events too). */
  const inboxViews = (conversations: Conversation[]) => webchat.inbox.views(conversations);

  // Unread first within the view, then most recently active (docs/design.md "Agent workspace").
  app.get('/inbox/conversations', { config: any, schema: { querystring: ListQuery } }, async (request) => {
    const { query } = request;
    const attributes = Object.entries(query as Record<string, string>)
      .filter(([key]) => key.startsWith('attr.'))
      .map(([key, value]): [string, string] => [key.slice('attr.'.length), value]);
    const limit = pageLimit(query.limit);
    const rows = await workspace.list(
      companyOf(request),
      {
        view: query.view ?? 'all',
        userId: sessionOf(request).user.id,
        ...(query.status ? { status: query.status === 'closed' ? 'resolved' : query.status } : {}),
        ...(query.label !== undefined ? { label: query.label } : {}),
        attributes,
      },
      { limit: limit + 1, ...(query.cursor ? { after: decodeInboxCursor(query.cursor) } : {}) },
    );
    const items = rows.slice(0, limit);
    const last = items.at(-1);
    return {
      items: await inboxViews(items),
      next_cursor: rows.length > limit && last ? encodeInboxCursor(last) : null,
    } satisfies InboxConversationPage;
  });

  app.get('/inbox/conversations/:id', { config: any, schema: { params: IdParams } }, async (request) => {
    const conversation = await load(request);
    const { messages } = await readMessagePage(
      webchat,
      conversation.id,
      { limit: '200' },
      { includeNotes: true },
    );
    const [view] = await inboxViews([conversation]);
    return {
      conversation: view,
      messages,
      read_marks: await webchat.reads.marksOf(conversation.id),
      status: inboxStatusOf(conversation),
      snoozed_until: conversation.status === 'closed' ? null : conversation.snoozedUntil,
      labels: conversation.labels,
      visitor: await workspace.visitorPanel(conversation, (id) => webchat.attachments.urlFor(id)),
      // The newest hand-over summary note (webchat/notes/handover-summary.ts marks it `kind: handover_summary`),
      // without its heading: the inbox shows it at the top of the conversation.
      summary: await handoverSummaryOf(webchat, conversation.id),
    } satisfies InboxConversationDetail;
  });

  // Agents mark what they have read (the inbox does when it shows a conversation and as messages arrive): up to
  // `message_id`, or the latest message. The visitor's widget learns it live ("Seen").
  app.post(
    '/inbox/conversations/:id/read',
    { config: any, schema: { params: IdParams, body: ReadBody } },
    async (request) => webchat.reads.markAgentRead(await load(request), request.body?.message_id),
  );

  app.post(
    '/inbox/conversations/:id/handover',
    { config: any, schema: { params: IdParams } },
    async (request) => {
      const agentName = displayNameOf(sessionOf(request).user);
      return platformConversationView(
        await webchat.commands.handover(companyOf(request), request.params.id, agentName, actor(request)),
      );
    },
  );

  app.post(
    '/inbox/conversations/:id/handback',
    { config: any, schema: { params: IdParams } },
    async (request) =>
      platformConversationView(
        await webchat.commands.handback(companyOf(request), request.params.id, actor(request)),
      ),
  );

  app.post('/inbox/conversations/:id/close', { config: any, schema: { params: IdParams } }, async (request) =>
    platformConversationView(
      await webchat.commands.close(companyOf(request), request.params.id, actor(request)),
    ),
  );

  // Agents attach a file to their next post: uploaded here, then named in the post's `attachment_ids`.
  registerPortalAttachmentRoute(
    app,
    webchat,
    '/inbox/conversations/:id/attachments',
    (request) => ({ companyId: companyOf(request), uploadedBy: actorOf(request) }),
    any,
  );

  app.post(
    '/inbox/conversations/:id/messages',
    { config: any, schema: { params: IdParams, body: Reply, headers: IdempotencyKeyHeaders } },
    async (request, reply) =>
      // With an Idempotency-Key, a retry after a time-out posts the reply once (idempotency/).
      answerIdempotently(webchat.idempotency, request, reply, companyOf(request), async () => ({
        status: 201,
        body: await webchat.commands.post(
          companyOf(request),
          request.params.id,
          { blocks: replyBlocks(request.body), author: agentAuthor(sessionOf(request).user) },
          actor(request),
        ),
      })),
  );

  /**
   * Connection + subscription tokens for the company's inbox channel (docs/routing.md "Live inbox"): the list is
   * pushed, never polled. Same subject and origin rules as a conversation's grant below.
   */
  app.post('/inbox/realtime', { config: any }, async (request) => {
    const { user } = sessionOf(request);
    return realtimeGrant(request, inboxChannelOf(user.companyId));
  });

  /**
   * Connection + subscription tokens for watching one conversation live (the realtime engine checks both). The
   * page's own origin, when it names the host this request was sent to, goes into the token's server-only meta:
   * the engine admits exactly that origin for it, so the inbox is live whatever name the portal was opened under.
   */
  app.post(
    '/inbox/conversations/:id/realtime',
    { config: any, schema: { params: IdParams } },
    async (request) => {
      const conversation = await load(request);
      return realtimeGrant(request, channelOf(conversation.companyId, conversation.id));
    },
  );

  /**
   * The signed-in agent's tokens for one channel of their company: a connection token (with the page's origin in
   * its server-only meta when it names this request's host) and a subscription token for `channel`.
   */
  function realtimeGrant(request: FastifyRequest, channel: string): RealtimeGrantView {
    const { user } = sessionOf(request);
    const subject = realtimeSubject(user.id);
    const origin = sameHostOrigin(request);
    return {
      websocket_url: websocketUrlOf(webchat.publicUrlFor(request)),
      connection_token: webchat.signer.connectionToken(subject, {
        company_id: user.companyId,
        channel_id: null,
        ...(origin ? { origin } : {}),
      }),
      connection_expires_in: CONNECTION_TOKEN_TTL_SECONDS,
      subscription_token: webchat.signer.subscriptionToken(subject, channel),
      subscription_expires_in: SUBSCRIPTION_TOKEN_TTL_SECONDS,
      channel,
    };
  }
}

/** The conversation's newest hand-over summary as the portal shows it, or null when it has none. */
async function handoverSummaryOf(
  webchat: Pick<InboxPortalDeps, 'messages'>,
  conversationId: string,
): Promise<HandoverSummaryView | null> {
  const note = await webchat.messages.latestNoteOfKind(conversationId, 'handover_summary');
  if (!note) return null;
  const text = textOf(note);
  return { text: readHandoverSummaryNote(text) ?? text, created_at: note.created_at };
}
