import { randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { BadRequestError } from '../../errors/app-error.ts';
import { keysetPage } from '../../http/keyset-cursor.ts';
import type { App } from '../../http/types.ts';
import { principalOf } from '../../oauth/principal.ts';
import { type Conversation, platformConversationView } from '../conversations/conversation.ts';
import type { Block } from '../messages/message.ts';
import { conversationNotFound } from '../webchat.errors.ts';
import type { Webchat } from '../webchat.ts';
import { MessagePageQuery, readMessagePage } from './message-page.ts';

const IdParams = Type.Object({ id: Type.String() });
const AgentBody = Type.Object(
  {
    blocks: Type.Array(
      Type.Object(
        { type: Type.Literal('markdown'), content: Type.String({ minLength: 1 }) },
        { additionalProperties: false },
      ),
      { minItems: 1 },
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

/**
 * The bearer token's principal. The OAuth capability's hook sets it for routes that declare `requiredScope`;
 * checking again here makes these routes fail closed should that hook ever be missing.
 */
/**
 * Agents' and integrations' view of conversations (`/platform/v1/conversations`, scopes `conversations:read` /
 * `conversations:write`): list, read, post as an agent, hand over, hand back, close. Always the caller's company.
 */
export function registerPlatformConversationRoutes(app: App, webchat: Webchat): void {
  const load = async (request: FastifyRequest, id: string): Promise<Conversation> => {
    const conversation = await webchat.conversations.findInCompany(principalOf(request).companyId, id);
    if (!conversation) throw conversationNotFound();
    return conversation;
  };

  app.get(
    '/platform/v1/conversations',
    {
      config: { requiredScope: 'conversations:read' },
      schema: {
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
        webchat.conversations.listForCompany(companyId, { ...query, status: request.query.status }),
      );
      return { conversations: page.items.map(platformConversationView), next_cursor: page.nextCursor };
    },
  );

  app.get(
    '/platform/v1/conversations/:id',
    { config: { requiredScope: 'conversations:read' }, schema: { params: IdParams } },
    async (request) => platformConversationView(await load(request, request.params.id)),
  );

  app.get(
    '/platform/v1/conversations/:id/messages',
    {
      config: { requiredScope: 'conversations:read' },
      schema: { params: IdParams, querystring: MessagePageQuery },
    },
    async (request) => {
      const conversation = await load(request, request.params.id);
      return readMessagePage(webchat, conversation.id, request.query);
    },
  );

  app.post(
    '/platform/v1/conversations/:id/messages',
    { config: { requiredScope: 'conversations:write' }, schema: { params: IdParams, body: AgentBody } },
    async (request, reply) => {
      const principal = principalOf(request);
      const conversation = await load(request, request.params.id);
      const { maxBlocks, maxMessageBytes } = webchat.config;
      if (request.body.blocks.length > maxBlocks)
        throw new BadRequestError('message_too_large', `A message holds at most ${maxBlocks} blocks.`);
      const bytes = request.body.blocks.reduce((n, b) => n + Buffer.byteLength(b.content), 0);
      if (bytes > maxMessageBytes)
        throw new BadRequestError(
          'message_too_large',
          `A message holds at most ${maxMessageBytes} bytes of text.`,
        );
      const blocks: Block[] = request.body.blocks.map((b) => ({
        id: randomUUID(),
        type: 'markdown',
        content: b.content,
      }));
      const author = { id: principal.clientId, name: request.body.author?.name ?? 'Agent' };
      const snapshot = await webchat.engine.postAgentMessage(conversation, blocks, author);
      await webchat.audit.record({
        type: 'conversation.agent_message_posted',
        companyId: principal.companyId,
        actor: `client:${principal.clientId}`,
        subject: conversation.id,
      });
      return reply.status(201).send(snapshot);
    },
  );

  app.post(
    '/platform/v1/conversations/:id/handover',
    { config: { requiredScope: 'conversations:write' }, schema: { params: IdParams, body: HandoverBody } },
    async (request) => {
      const conversation = await load(request, request.params.id);
      if (conversation.handledBy !== 'agent')
        await webchat.engine.handover(conversation, request.body?.author?.name ?? null);
      return platformConversationView((await webchat.conversations.find(conversation.id))!);
    },
  );

  app.post(
    '/platform/v1/conversations/:id/handback',
    { config: { requiredScope: 'conversations:write' }, schema: { params: IdParams } },
    async (request) => {
      const conversation = await load(request, request.params.id);
      if (conversation.handledBy !== 'digital_employee') await webchat.engine.handback(conversation);
      return platformConversationView((await webchat.conversations.find(conversation.id))!);
    },
  );

  app.post(
    '/platform/v1/conversations/:id/close',
    { config: { requiredScope: 'conversations:write' }, schema: { params: IdParams } },
    async (request) => {
      const conversation = await load(request, request.params.id);
      await webchat.engine.close(conversation);
      return platformConversationView((await webchat.conversations.find(conversation.id))!);
    },
  );
}
