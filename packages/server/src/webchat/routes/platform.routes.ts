import { NOTE_LIMITS } from '@parley/webchat-protocol';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { keysetPage } from '../../http/keyset-cursor.ts';
import type { App } from '../../http/types.ts';
import type { IdempotencyKeys } from '../../idempotency/idempotency-keys.ts';
import { answerIdempotently, IdempotencyKeyHeaders } from '../../idempotency/idempotent-post.ts';
import { principalOf } from '../../oauth/principal.ts';
import { AttachmentBlockInput } from '../attachments/attachments.schemas.ts';
import { type Conversation, platformConversationView } from '../conversation.ts';
import type { ConversationCommands } from '../conversations/conversation-commands.ts';
import type { ConversationsService } from '../conversations/conversations.service.ts';
import {
  CardBlockInput,
  MarkdownBlockInput,
  QuickRepliesBlockInput,
} from '../interactive/interactive.schemas.ts';
import type { NotesService } from '../notes/notes.service.ts';
import { type MessagePageDeps, MessagePageQuery, readMessagePage } from './message-page.ts';

const IdParams = Type.Object({ id: Type.String() });

/** The API reference entry of a /platform/v1/conversations operation. */
const docs = (summary: string, description?: string) => ({
  tags: ['conversations'],
  summary,
  ...(description ? { description } : {}),
});
const AgentBody = Type.Object(
  {
    blocks: Type.Array(
      Type.Union([MarkdownBlockInput, AttachmentBlockInput, QuickRepliesBlockInput, CardBlockInput], {
        description: "A block of an agent's post: markdown, an attachment, quick replies or a card.",
      }),
      { minItems: 1 },
    ),
    author: Type.Optional(
      Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);
const NoteBody = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: NOTE_LIMITS.textBytes }),
    mentions: Type.Optional(
      Type.Array(Type.String({ maxLength: 100 }), {
        maxItems: NOTE_LIMITS.mentions,
        description: 'Portal user ids.',
      }),
    ),
    author: Type.Optional(
      Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);
const HandoverBody = Type.Optional(
  Type.Object(
    { author: Type.Optional(Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) })) },
    { additionalProperties: false },
  ),
);

/** What the platform's conversation routes use: the company's conversations, agents' commands, notes, replays. */
export interface PlatformConversationDeps extends MessagePageDeps {
  conversations: Pick<ConversationsService, 'listForCompany'>;
  commands: Pick<ConversationCommands, 'find' | 'post' | 'handover' | 'handback' | 'close'>;
  notes: Pick<NotesService, 'addNote'>;
  /** Idempotency-Key of agents' message posts (idempotency/). */
  idempotency: IdempotencyKeys;
}

/**
 * Agents' and integrations' view of conversations (`/platform/v1/conversations`, scopes `conversations:read` /
 * `conversations:write`): list, read, post as an agent, hand over, hand back, close. Always the caller's company.
 */
export function registerPlatformConversationRoutes(app: App, deps: PlatformConversationDeps): void {
  const load = (request: FastifyRequest, id: string): Promise<Conversation> =>
    deps.commands.find(principalOf(request).companyId, id);

  app.get(
    '/platform/v1/conversations',
    {
      config: { requiredScope: 'conversations:read' },
      schema: {
        ...docs('List the company’s conversations', 'Most recently active first; `cursor` pages on.'),
        querystring: Type.Object({
          limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$' })),
          cursor: Type.Optional(Type.String({ maxLength: 200 })),
          status: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed')])),
        }),
      },
    },
    async (request) => {
      const { companyId } = principalOf(request);
      const limit = Math.min(Math.max(Number(request.query.limit ?? 50), 1), 200);
      const page = await keysetPage(limit, request.query.cursor, (query) =>
        deps.conversations.listForCompany(companyId, { ...query, status: request.query.status }),
      );
      return { conversations: page.items.map(platformConversationView), next_cursor: page.nextCursor };
    },
  );

  app.get(
    '/platform/v1/conversations/:id',
    {
      config: { requiredScope: 'conversations:read' },
      schema: { ...docs('Read one conversation'), params: IdParams },
    },
    async (request) => platformConversationView(await load(request, request.params.id)),
  );

  app.get(
    '/platform/v1/conversations/:id/messages',
    {
      config: { requiredScope: 'conversations:read' },
      schema: { ...docs('Read a page of messages'), params: IdParams, querystring: MessagePageQuery },
    },
    async (request) => {
      const conversation = await load(request, request.params.id);
      return readMessagePage(deps, conversation.id, request.query, { includeNotes: true });
    },
  );

  app.post(
    '/platform/v1/conversations/:id/notes',
    {
      config: { requiredScope: 'conversations:write' },
      schema: {
        ...docs(
          'Add an internal note',
          'A note for agents only: it shows in platform and portal reads of the conversation (role `note`), is ' +
            'sent to webhooks as `note.created`, and never reaches the visitor. `mentions` are ids of portal users ' +
            'of the company.',
        ),
        params: IdParams,
        body: NoteBody,
      },
    },
    async (request, reply) => {
      const { companyId, clientId } = principalOf(request);
      const note = await deps.notes.addNote(companyId, request.params.id, {
        text: request.body.text,
        mentions: request.body.mentions,
        author: { type: 'agent', id: `client:${clientId}`, name: request.body.author?.name ?? 'Agent' },
      });
      return reply.status(201).send(note);
    },
  );

  const actorOf = (request: FastifyRequest) => ({
    id: `client:${principalOf(request).clientId}`,
    ip: request.ip,
  });

  app.post(
    '/platform/v1/conversations/:id/messages',
    {
      config: { requiredScope: 'conversations:write' },
      schema: {
        ...docs(
          'Post as an agent',
          'Takes the conversation over from the digital employee first (handover). Answers the stored message. ' +
            '`blocks` may hold quick replies and cards after the markdown (interactive blocks).',
        ),
        params: IdParams,
        body: AgentBody,
        headers: IdempotencyKeyHeaders,
      },
    },
    async (request, reply) => {
      const { companyId, clientId } = principalOf(request);
      // A client that retries after a time-out sends the same Idempotency-Key: posted once (idempotency/).
      return answerIdempotently(deps.idempotency, request, reply, companyId, async () => ({
        status: 201,
        body: await deps.commands.post(
          companyId,
          request.params.id,
          {
            blocks: request.body.blocks,
            author: { id: clientId, name: request.body.author?.name ?? 'Agent' },
          },
          actorOf(request),
        ),
      }));
    },
  );

  app.post(
    '/platform/v1/conversations/:id/handover',
    {
      config: { requiredScope: 'conversations:write' },
      schema: {
        ...docs(
          'Take the conversation over',
          'The digital employee stops, even mid-reply, and stays silent.',
        ),
        params: IdParams,
        body: HandoverBody,
      },
    },
    async (request) => {
      const { companyId } = principalOf(request);
      const agentName = request.body?.author?.name ?? null;
      return platformConversationView(
        await deps.commands.handover(companyId, request.params.id, agentName, actorOf(request)),
      );
    },
  );

  app.post(
    '/platform/v1/conversations/:id/handback',
    {
      config: { requiredScope: 'conversations:write' },
      schema: { ...docs('Hand the conversation back to the digital employee'), params: IdParams },
    },
    async (request) => {
      const { companyId } = principalOf(request);
      return platformConversationView(
        await deps.commands.handback(companyId, request.params.id, actorOf(request)),
      );
    },
  );

  app.post(
    '/platform/v1/conversations/:id/close',
    {
      config: { requiredScope: 'conversations:write' },
      schema: {
        ...docs('Close the conversation', 'Terminal: no more messages are accepted.'),
        params: IdParams,
      },
    },
    async (request) => {
      const { companyId } = principalOf(request);
      return platformConversationView(
        await deps.commands.close(companyId, request.params.id, actorOf(request)),
      );
    },
  );
}
