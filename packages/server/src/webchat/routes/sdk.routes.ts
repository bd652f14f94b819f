import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { BadRequestError } from '../../errors/app-error.ts';
import type { App } from '../../http/types.ts';
import { channelOf, conversationView } from '../conversations/conversation.ts';
import { CONNECTION_TOKEN_TTL_SECONDS, SUBSCRIPTION_TOKEN_TTL_SECONDS } from '../realtime/tokens.ts';
import { conversationNotFound } from '../webchat.errors.ts';
import type { Webchat } from '../webchat.ts';
import { MessagePageQuery, readMessagePage, UUID_PATTERN } from './message-page.ts';
import { enforceOrigin, resolveSdkSession, type SdkSession, setCorsHeaders } from './sdk-session.ts';

const SDK_HEADERS = 'Content-Type, X-Session-Id, X-Company, X-Channel-Id';

const session = (request: FastifyRequest): SdkSession => request.sdkSession!;
const scopeOf = (s: SdkSession) => ({
  companyId: s.company.id,
  sessionId: s.sessionId,
  channelId: s.channel?.id,
});

/**
 * The webchat SDK REST surface, `/sdk/v1` (DESIGN.md "Webchat REST"). Every route first resolves the session
 * headers and the browser Origin; a session only ever sees its own conversations (and, with X-Channel-Id, only
 * that channel's).
 */
export function registerSdkRoutes(app: App, webchat: Webchat): void {
  // publicUrl is read per request: tests learn their port only after listen.
  const ownOriginOf = () => new URL(webchat.publicUrl()).origin;

  app.register(
    async (plugin) => {
      const sdk = plugin.withTypeProvider<TypeBoxTypeProvider>();
      // CORS preflight carries no X-Company value, so it is answered for any origin some company or channel lists;
      // the real request is then checked against that company's or channel's own list.
      sdk.options('/*', async (request, reply) => {
        const origin = request.headers.origin;
        if (!origin || !(origin === ownOriginOf() || (await webchat.channels.isKnownOrigin(origin)))) {
          return reply.status(403).type('application/problem+json').send({
            type: 'https://parley.dev/problems/origin_not_allowed',
            title: 'Forbidden',
            status: 403,
            code: 'origin_not_allowed',
            detail: 'This Origin is not allowed to use the webchat API.',
          });
        }
        setCorsHeaders(reply, origin);
        reply.header('access-control-allow-methods', 'GET, POST, OPTIONS');
        reply.header('access-control-allow-headers', SDK_HEADERS);
        reply.header('access-control-max-age', '600');
        return reply.status(204).send();
      });

      sdk.addHook('onRequest', async (request, reply) => {
        if (request.method === 'OPTIONS') return;
        try {
          request.sdkSession = await resolveSdkSession(request, webchat.companies, webchat.channels);
          enforceOrigin(request, reply, request.sdkSession, ownOriginOf());
        } catch (err) {
          await exposeErrorToKnownOrigin(request, reply, webchat, ownOriginOf(), err);
          throw err;
        }
      });

      sdk.post('/conversations', async (request, reply) => {
        requireEmptyOrObject(request.body);
        const s = session(request);
        await webchat.limiter.enforce(
          [
            { key: `conv:s:${s.sessionId}`, limit: webchat.config.conversationsPerMinutePerSession },
            { key: `conv:ip:${request.ip}`, limit: webchat.config.conversationsPerMinutePerIp },
          ],
          'conversations created',
        );
        const employeeId =
          s.channel?.digitalEmployeeId ??
          (await webchat.conversations.defaultDigitalEmployee(s.company.id)).id;
        const conversation = await webchat.conversations.create(scopeOf(s), employeeId);
        await webchat.engine.postGreeting(conversation);
        return reply.status(201).send(conversationView(conversation));
      });

      sdk.get('/conversations', async (request) => {
        const conversations = await webchat.conversations.listForSession(scopeOf(session(request)));
        return { conversations: conversations.map(conversationView) };
      });

      sdk.get(
        '/conversations/:id',
        { schema: { params: Type.Object({ id: Type.String() }) } },
        async (request) => {
          const conversation = await webchat.conversations.findForSession(
            scopeOf(session(request)),
            request.params.id,
          );
          if (!conversation) throw conversationNotFound();
          return conversationView(conversation);
        },
      );

      sdk.get(
        '/conversations/:id/messages',
        {
          schema: { params: Type.Object({ id: Type.String() }), querystring: MessagePageQuery },
        },
        async (request) => {
          const conversation = await webchat.conversations.findForSession(
            scopeOf(session(request)),
            request.params.id,
          );
          if (!conversation) throw conversationNotFound();
          return readMessagePage(webchat, conversation.id, request.query);
        },
      );

      sdk.post('/auth/connect-token', async (request, reply) => {
        requireEmptyOrObject(request.body);
        const s = session(request);
        const token = webchat.signer.connectionToken(s.sessionId, {
          company_id: s.company.id,
          channel_id: s.channel?.id ?? null,
        });
        return reply
          .header('cache-control', 'no-store')
          .send({ connection_token: token, expires_in: CONNECTION_TOKEN_TTL_SECONDS });
      });

      sdk.post(
        '/auth/subscribe-token',
        { schema: { body: Type.Object({ conversation_id: Type.String({ pattern: UUID_PATTERN }) }) } },
        async (request, reply) => {
          const s = session(request);
          const conversation = await webchat.conversations.findForSession(
            scopeOf(s),
            request.body.conversation_id,
          );
          if (!conversation) throw conversationNotFound();
          const channel = channelOf(conversation.companyId, conversation.id);
          const token = webchat.signer.subscriptionToken(s.sessionId, channel);
          return reply
            .header('cache-control', 'no-store')
            .send({ subscription_token: token, expires_in: SUBSCRIPTION_TOKEN_TTL_SECONDS, channel });
        },
      );

      sdk.get('/config', async () => {
        const base = webchat.publicUrl().replace(/^http/, 'ws');
        return { realtime_url: base, websocket_url: `${base}/connection/websocket` };
      });
    },
    { prefix: '/sdk/v1' },
  );
}

/** `{}` is what the SDK sends; server-side callers may also send no body at all. */
function requireEmptyOrObject(body: unknown): void {
  if (body === undefined || (body !== null && typeof body === 'object' && !Array.isArray(body))) return;
  throw new BadRequestError('validation_failed', 'The body must be a JSON object (or empty).');
}

/** Lets a browser read the error (e.g. a bad header) when its origin is one some company or channel admits. */
async function exposeErrorToKnownOrigin(
  request: FastifyRequest,
  reply: FastifyReply,
  webchat: Webchat,
  ownOrigin: string,
  err: unknown,
): Promise<void> {
  const origin = request.headers.origin;
  if (!origin || (err as { code?: string }).code === 'origin_not_allowed') return;
  if (origin === ownOrigin || (await webchat.channels.isKnownOrigin(origin))) setCorsHeaders(reply, origin);
}
