import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { readVisitorAttributes, type VisitorAttributes } from '@parley/webchat-protocol';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, BadRequestError } from '../../errors/app-error.ts';
import { sendProblem } from '../../http/problem.ts';
import { realtimeFallbackUrlsOf, websocketUrlOf } from '../../http/public-url.ts';
import type { App } from '../../http/types.ts';
import { registerSdkAttachmentRoutes } from '../attachments/attachments.routes.ts';
import { type Conversation, channelOf, conversationView } from '../conversation.ts';
import { CONNECTION_TOKEN_TTL_SECONDS, SUBSCRIPTION_TOKEN_TTL_SECONDS } from '../realtime/tokens.ts';
import { openingView } from '../routing/routing.schemas.ts';
import { registerSdkRoutingRoutes } from '../routing/sdk-routing.routes.ts';
import type { Webchat } from '../webchat-services.ts';
import { MessagePageQuery, readMessagePage, UUID_PATTERN } from './message-page.ts';
import { registerSdkFeedbackRoutes } from './sdk-feedback.routes.ts';
import {
  enforceOrigin,
  identifyVisitor,
  ownConversation,
  realtimeSubjectOf,
  resolveSdkSession,
  type SdkSession,
  scopeOf,
  setCorsHeaders,
} from './sdk-session.ts';

const SDK_HEADERS = 'Content-Type, X-Session-Id, X-Company, X-Channel-Id, X-Visitor-Token';

/** What every /sdk/v1 operation shows in the API reference (the headers are checked by resolveSdkSession). */
const sdkDocs = (summary: string, description?: string) => ({
  tags: ['webchat-sdk'],
  summary,
  description: [
    'Session headers: `X-Session-Id` (a UUID the client generates), `X-Company` (company id), optional `X-Channel-Id`; `X-Visitor-Token` (a verified visitor, on channels with identity on).',
    description,
  ]
    .filter(Boolean)
    .join(' '),
});

const session = (request: FastifyRequest): SdkSession => request.sdkSession!;

/**
 * The SDK view of conversations with what the visitor has not read yet and their CSAT (read state and ratings live
 * in reads/ and feedback/).
 */
async function sdkViews(webchat: Webchat, conversations: Conversation[]) {
  const ids = conversations.map((c) => c.id);
  const [unread, csat] = await Promise.all([
    webchat.reads.unreadCounts('visitor', ids),
    webchat.feedback.csatOf(ids),
  ]);
  return conversations.map((c) => ({
    ...conversationView(c),
    unread_count: unread.get(c.id) ?? 0,
    csat: csat.get(c.id) ?? null,
  }));
}

/**
 * The webchat SDK REST surface, `/sdk/v1` (docs/design.md "Webchat REST"). Every route first resolves the session
 * headers, the browser Origin and the verified visitor (X-Visitor-Token); a session only ever sees its own
 * conversations, or its visitor's (and, with X-Channel-Id, only that channel's).
 */
export function registerSdkRoutes(app: App, webchat: Webchat): void {
  app.register(
    async (plugin) => {
      const sdk = plugin.withTypeProvider<TypeBoxTypeProvider>();
      // CORS preflight carries no X-Company value, so it is answered for any origin some company or channel lists;
      // the real request is then checked against that company's or channel's own list.
      sdk.options('/*', async (request, reply) => {
        const origin = request.headers.origin;
        if (!origin || !(await admitsSomewhere(request, webchat, origin))) {
          return sendProblem(
            reply,
            new AppError(403, 'origin_not_allowed', 'This Origin is not allowed to use the webchat API.'),
          );
        }
        setCorsHeaders(reply, origin);
        reply.header('access-control-allow-methods', 'GET, POST, PUT, OPTIONS');
        reply.header('access-control-allow-headers', SDK_HEADERS);
        reply.header('access-control-max-age', '600');
        return reply.status(204).send();
      });

      sdk.addHook('onRequest', async (request, reply) => {
        if (request.method === 'OPTIONS') return;
        try {
          const s = await resolveSdkSession(request, webchat.companies, webchat.channels);
          enforceOrigin(request, reply, s, webchat.ownOriginsFor(request));
          const visitor = identifyVisitor(request, s, webchat.identity);
          if (visitor) s.visitor = await webchat.visitors.remember(s.company.id, s.sessionId, visitor);
          request.sdkSession = s;
        } catch (err) {
          await exposeErrorToKnownOrigin(request, reply, webchat, err);
          throw err;
        }
      });

      sdk.post(
        '/conversations',
        {
          schema: sdkDocs(
            'Start a conversation',
            'Routed to the channel’s digital employee (or the company default); its greeting is posted first.',
          ),
        },
        async (request, reply) => {
          const start = startOptions(request.body);
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
          const conversation = await webchat.conversations.create(scopeOf(s), employeeId, s.visitor, start);
          // A greeting's announcement feeds the agents' inbox; without one, the inbox learns of it here.
          if (!(await webchat.engine.postGreeting(conversation)))
            void webchat.inbox.changed(conversation.id, conversation.companyId);
          return reply.status(201).send(conversationView(conversation));
        },
      );

      sdk.get(
        '/conversations',
        {
          schema: sdkDocs(
            'List this session’s conversations',
            'A verified visitor’s from every session and device. With X-Channel-Id, only that channel’s. Each carries `unread_count`.',
          ),
        },
        async (request) => {
          const conversations = await webchat.conversations.listForSession(scopeOf(session(request)));
          return { conversations: await sdkViews(webchat, conversations) };
        },
      );

      sdk.get(
        '/conversations/:id',
        { schema: { ...sdkDocs('Read one conversation'), params: Type.Object({ id: Type.String() }) } },
        async (request) =>
          (await sdkViews(webchat, [await ownConversation(webchat, request, request.params.id)]))[0],
      );

      sdk.get(
        '/conversations/:id/messages',
        {
          schema: {
            ...sdkDocs(
              'Read a page of messages',
              'Newest page first, oldest message first within it; `before` pages back. A reply still streaming is shown as it is now.',
            ),
            params: Type.Object({ id: Type.String() }),
            querystring: MessagePageQuery,
          },
        },
        async (request) => {
          const conversation = await ownConversation(webchat, request, request.params.id);
          return readMessagePage(webchat, conversation.id, request.query);
        },
      );

      sdk.post(
        '/auth/connect-token',
        {
          schema: sdkDocs(
            'Get a realtime connection token',
            'HS256 JWT for the WebSocket `connect`, 15 minutes.',
          ),
        },
        async (request, reply) => {
          requireEmptyOrObject(request.body);
          const s = session(request);
          const token = webchat.signer.connectionToken(realtimeSubjectOf(s), {
            company_id: s.company.id,
            channel_id: s.channel?.id ?? null,
          });
          return reply
            .header('cache-control', 'no-store')
            .send({ connection_token: token, expires_in: CONNECTION_TOKEN_TTL_SECONDS });
        },
      );

      sdk.post(
        '/auth/subscribe-token',
        {
          schema: {
            ...sdkDocs(
              'Get a subscription token',
              'For one conversation of this session: its channel, 24 hours.',
            ),
            body: Type.Object({ conversation_id: Type.String({ pattern: UUID_PATTERN }) }),
          },
        },
        async (request, reply) => {
          const conversation = await ownConversation(webchat, request, request.body.conversation_id);
          const channel = channelOf(conversation.companyId, conversation.id);
          const token = webchat.signer.subscriptionToken(realtimeSubjectOf(session(request)), channel);
          return reply
            .header('cache-control', 'no-store')
            .send({ subscription_token: token, expires_in: SUBSCRIPTION_TOKEN_TTL_SECONDS, channel });
        },
      );

      registerSdkFeedbackRoutes(sdk, webchat);
      registerSdkRoutingRoutes(sdk, webchat);
      registerSdkAttachmentRoutes(sdk, webchat);

      // PARLEY_PUBLIC_URL when configured; in development the host this request came in on, so a page opened at
      // http://127.0.0.1:8080 is not sent to ws://localhost:8080.
      // `business_hours`: whether the company's agents are in now and when they are next (docs/routing.md), so the
      // widget can say when a person is back before the visitor asks for one.
      sdk.get(
        '/config',
        { schema: sdkDocs('Where the realtime endpoint is; whether agents are in') },
        async (request) => {
          const base = webchat.publicUrlFor(request);
          return {
            business_hours: openingView(await webchat.routingSettings.get(session(request).company.id)),
            realtime_url: base.replace(/^http/, 'ws'),
            websocket_url: websocketUrlOf(base),
            // Where the SDK falls back when a WebSocket cannot be opened (docs/design.md "Webchat REST").
            ...realtimeFallbackUrlsOf(base),
          };
        },
      );
    },
    { prefix: '/sdk/v1' },
  );
}

/** `{}` is what the SDK sends; server-side callers may also send no body at all. */
/**
 * The optional body of a new conversation (docs/design.md "Agent workspace"): the visitor's custom `attributes`
 * (limits in @parley/webchat-protocol visitor-attributes.ts; a verified token's own attributes win) and the
 * `page_url` it starts on (http(s), at most 2048 characters), both shown to agents. Anything else is ignored.
 */
function startOptions(body: unknown): { attributes?: VisitorAttributes; pageUrl?: string } {
  requireEmptyOrObject(body);
  const { attributes, page_url: pageUrl } = (body ?? {}) as { attributes?: unknown; page_url?: unknown };
  const reading = readVisitorAttributes(attributes);
  if (reading.problem !== undefined) {
    throw new BadRequestError('validation_failed', `Invalid body: ${reading.problem}`, {
      errors: [{ field: 'attributes', message: reading.problem }],
    });
  }
  if (pageUrl !== undefined && !isPageUrl(pageUrl)) {
    const message = 'must be an http(s) URL of at most 2048 characters';
    throw new BadRequestError('validation_failed', `Invalid body: page_url ${message}.`, {
      errors: [{ field: 'page_url', message }],
    });
  }
  return { attributes: reading.attributes, ...(typeof pageUrl === 'string' ? { pageUrl } : {}) };
}

function isPageUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > 2048) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function requireEmptyOrObject(body: unknown): void {
  if (body === undefined || (body !== null && typeof body === 'object' && !Array.isArray(body))) return;
  throw new BadRequestError('validation_failed', 'The body must be a JSON object (or empty).');
}

/** Lets a browser read the error (e.g. a bad header) when its origin is one some company or channel admits. */
async function exposeErrorToKnownOrigin(
  request: FastifyRequest,
  reply: FastifyReply,
  webchat: Webchat,
  err: unknown,
): Promise<void> {
  const origin = request.headers.origin;
  if (!origin || (err as { code?: string }).code === 'origin_not_allowed') return;
  if (await admitsSomewhere(request, webchat, origin)) setCorsHeaders(reply, origin);
}

/** Whether this server's own origin or some company's or channel's list admits `origin` (preflight and errors). */
async function admitsSomewhere(request: FastifyRequest, webchat: Webchat, origin: string): Promise<boolean> {
  return webchat.ownOriginsFor(request).includes(origin) || webchat.channels.isKnownOrigin(origin);
}
