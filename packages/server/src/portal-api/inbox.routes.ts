import { randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { BadRequestError } from '../errors/app-error.ts';
import { keysetPage } from '../http/keyset-cursor.ts';
import type { App } from '../http/types.ts';
import {
  type Conversation,
  channelOf,
  platformConversationView,
} from '../webchat/conversations/conversation.ts';
import type { Block, MessageAuthor } from '../webchat/messages/message.ts';
import { CONNECTION_TOKEN_TTL_SECONDS, SUBSCRIPTION_TOKEN_TTL_SECONDS } from '../webchat/realtime/tokens.ts';
import { readMessagePage } from '../webchat/routes/message-page.ts';
import { conversationNotFound } from '../webchat/webchat.errors.ts';
import type { Webchat } from '../webchat/webchat.ts';
import { pageLimit } from './pagination.ts';
import { actorOf, type PortalDeps, sessionOf } from './portal-auth.ts';

const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
const ListQuery = Type.Object(
  {
    status: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed')])),
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$' })),
    cursor: Type.Optional(Type.String({ maxLength: 300 })),
  },
  { additionalProperties: false },
);
const Reply = Type.Object({ content: Type.String({ maxLength: 100_000 }) }, { additionalProperties: false });

/** Realtime subjects of portal users are namespaced so they can never equal a visitor's X-Session-Id. */
const realtimeSubject = (userId: string) => `portal-user:${userId}`;

/** The name visitors see on an agent's messages: the part of the email before the @. */
const agentAuthor = (user: { id: string; email: string }): MessageAuthor => ({
  id: `user:${user.id}`,
  name: user.email.split('@')[0]!,
});

/**
 * The agent inbox (admins and agents): the company's conversations, their transcripts, and the agent actions
 * (take over, reply, hand back), all through the webchat's ConversationsService / MessageStore / ConversationEngine.
 * Live updates come from the realtime engine: the browser subscribes to the conversation channel with tokens
 * signed here (subject `portal-user:<id>`, so the publish hook never accepts its publications as a visitor's).
 */
export function registerInboxRoutes(app: App, { ctx }: PortalDeps, webchat: Webchat): void {
  const any = { portalAccess: 'any' as const };
  const load = async (request: FastifyRequest<{ Params: { id: string } }>): Promise<Conversation> => {
    const conversation = await webchat.conversations.findInCompany(
      sessionOf(request).user.companyId,
      request.params.id,
    );
    if (!conversation) throw conversationNotFound();
    return conversation;
  };
  const view = async (id: string) => platformConversationView((await webchat.conversations.find(id))!);
  const audit = (request: FastifyRequest, type: string, conversation: Conversation) =>
    ctx.audit.record({
      type,
      companyId: conversation.companyId,
      actor: actorOf(request),
      subject: conversation.id,
      ip: request.ip,
    });

  app.get('/inbox/conversations', { config: any, schema: { querystring: ListQuery } }, async (request) => {
    const page = await keysetPage(pageLimit(request.query.limit), request.query.cursor, (query) =>
      webchat.conversations.listForCompany(sessionOf(request).user.companyId, {
        ...query,
        status: request.query.status,
      }),
    );
    return { items: page.items.map(platformConversationView), next_cursor: page.nextCursor };
  });

  app.get('/inbox/conversations/:id', { config: any, schema: { params: IdParams } }, async (request) => {
    const conversation = await load(request);
    const { messages } = await readMessagePage(webchat, conversation.id, { limit: '200' });
    return { conversation: platformConversationView(conversation), messages };
  });

  app.post(
    '/inbox/conversations/:id/handover',
    { config: any, schema: { params: IdParams } },
    async (request) => {
      const conversation = await load(request);
      if (conversation.handledBy !== 'agent') {
        await webchat.engine.handover(conversation, agentAuthor(sessionOf(request).user).name);
        await audit(request, 'conversation.handed_over', conversation);
      }
      return view(conversation.id);
    },
  );

  app.post(
    '/inbox/conversations/:id/handback',
    { config: any, schema: { params: IdParams } },
    async (request) => {
      const conversation = await load(request);
      if (conversation.handledBy !== 'digital_employee') {
        await webchat.engine.handback(conversation);
        await audit(request, 'conversation.handed_back', conversation);
      }
      return view(conversation.id);
    },
  );

  app.post(
    '/inbox/conversations/:id/messages',
    { config: any, schema: { params: IdParams, body: Reply } },
    async (request, reply) => {
      const conversation = await load(request);
      const content = request.body.content.trim();
      if (!content)
        throw new BadRequestError('empty_message', 'Write a message first.', {
          errors: [{ field: 'content', message: 'is empty' }],
        });
      if (Buffer.byteLength(content) > webchat.config.maxMessageBytes) {
        throw new BadRequestError(
          'message_too_large',
          `A message holds at most ${webchat.config.maxMessageBytes} bytes of text.`,
          {
            errors: [{ field: 'content', message: `is longer than ${webchat.config.maxMessageBytes} bytes` }],
          },
        );
      }
      const blocks: Block[] = [{ id: randomUUID(), type: 'markdown', content }];
      const snapshot = await webchat.engine.postAgentMessage(
        conversation,
        blocks,
        agentAuthor(sessionOf(request).user),
      );
      await audit(request, 'conversation.agent_message_posted', conversation);
      return reply.status(201).send(snapshot);
    },
  );

  /** Connection + subscription tokens for watching one conversation live (the realtime engine checks both). */
  app.post(
    '/inbox/conversations/:id/realtime',
    { config: any, schema: { params: IdParams } },
    async (request) => {
      const conversation = await load(request);
      const subject = realtimeSubject(sessionOf(request).user.id);
      const channel = channelOf(conversation.companyId, conversation.id);
      return {
        websocket_url: `${webchat.publicUrl().replace(/^http/, 'ws')}/connection/websocket`,
        connection_token: webchat.signer.connectionToken(subject, {
          company_id: conversation.companyId,
          channel_id: null,
        }),
        connection_expires_in: CONNECTION_TOKEN_TTL_SECONDS,
        subscription_token: webchat.signer.subscriptionToken(subject, channel),
        subscription_expires_in: SUBSCRIPTION_TOKEN_TTL_SECONDS,
        channel,
      };
    },
  );
}
