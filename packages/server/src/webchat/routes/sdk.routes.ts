import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { readVisitorAttributes, type VisitorAttributes } from '@parley/webchat-protocol';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CompaniesService } from '../../companies/companies.service.ts';
import type { Config } from '../../config/schema.ts';
import { AppError, BadRequestError } from '../../errors/app-error.ts';
import { sendProblem } from '../../http/problem.ts';
import { realtimeFallbackUrlsOf, websocketUrlOf } from '../../http/public-url.ts';
import type { App } from '../../http/types.ts';
import type { AbuseLimits } from '../abuse-limits.ts';
import { registerSdkAttachmentRoutes, type UploadDeps } from '../attachments/attachments.routes.ts';
import type { ChannelsService } from '../channels/channels.service.ts';
import { type Conversation, channelOf, conversationView } from '../conversation.ts';
import type { ConversationCommands } from '../conversations/conversation-commands.ts';
import type { ConversationEngine } from '../conversations/conversation-engine.ts';
import type { ConversationsService } from '../conversations/conversations.service.ts';
import type { FeedbackService } from '../feedback/feedback.service.ts';
import type { ChannelIdentity } from '../identity/channel-identity.ts';
import {
  enforceOrigin,
  identifyVisitor,
  ownConversation,
  realtimeSubjectOf,
  resolveSdkSession,
  type SdkSession,
  scopeOf,
  setCorsHeaders,
} from '../identity/sdk-session.ts';
import type { VisitorDirectory } from '../identity/visitor-directory.ts';
import type { InboxFeed } from '../inbox-feed/inbox-feed.ts';
import type { ReadMarks } from '../reads/read-marks.ts';
import {
  CONNECTION_TOKEN_TTL_SECONDS,
  type RealtimeTokenSigner,
  SUBSCRIPTION_TOKEN_TTL_SECONDS,
} from '../realtime/tokens.ts';
import { openingView } from '../routing/routing.schemas.ts';
import type { RoutingSettingsStore } from '../routing/routing-settings.ts';
import { registerSdkRoutingRoutes } from '../routing/sdk-routing.routes.ts';
import { UUID_PATTERN } from '../uuid-pattern.ts';
import { type MessagePageDeps, MessagePageQuery, readMessagePage } from './message-page.ts';
import { registerSdkFeedbackRoutes } from './sdk-feedback.routes.ts';

/**
 * What the SDK surface (`/sdk/v1`) uses, each collaborator narrowed to the calls made here or in the visitor's
 * feedback, routing and upload routes it registers; built once by the webchat's root (packages/server/src/webchat/webchat.ts `registerWebchat`).
 */
export type SdkRoutesDeps = MessagePageDeps &
  UploadDeps & {
    /** The abuse limits of conversations and uploads per minute (docs/config.md "Webchat"). */
    limits: Pick<
      Config['webchat'],
      | 'conversationsPerMinutePerSession'
      | 'conversationsPerMinutePerIp'
      | 'uploadsPerMinutePerSession'
      | 'uploadsPerMinutePerIp'
    >;
    /** The base URL to hand this request's client (PARLEY_PUBLIC_URL, or in development the request's own). */
    publicUrlFor(request: FastifyRequest): string;
    /** The browser origins that are Parley's own for this request (always allowed to use the webchat). */
    ownOriginsFor(request: FastifyRequest): string[];
    companies: Pick<CompaniesService, 'find'>;
    channels: Pick<ChannelsService, 'find' | 'isKnownOrigin'>;
    identity: Pick<ChannelIdentity, 'identify'>;
    visitors: Pick<VisitorDirectory, 'remember'>;
    limiter: Pick<AbuseLimits, 'enforce'>;
    conversations: Pick<
      ConversationsService,
      'findForSession' | 'listForSession' | 'create' | 'defaultDigitalEmployee'
    >;
    /** Posts a new conversation's greeting (conversations/conversation-engine.ts). */
    greeter: Pick<ConversationEngine, 'postGreeting'>;
    inbox: Pick<InboxFeed, 'changed'>;
    reads: Pick<ReadMarks, 'unreadCounts' | 'markVisitorRead'>;
    feedback: Pick<FeedbackService, 'feedbackOf' | 'csatOf' | 'rateMessage' | 'rateConversation'>;
    signer: Pick<RealtimeTokenSigner, 'connectionToken' | 'subscriptionToken'>;
    commands: Pick<ConversationCommands, 'requestHuman'>;
    routingSettings: Pick<RoutingSettingsStore, 'get'>;
  };

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
async function sdkViews(deps: Pick<SdkRoutesDeps, 'reads' | 'feedback'>, conversations: Conversation[]) {
  const ids = conversations.map((c) => c.id);
  const [unread, csat] = await Promise.all([
    deps.reads.unreadCounts('visitor', ids),
    deps.feedback.csatOf(ids),
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
export function registerSdkRoutes(app: App, deps: SdkRoutesDeps): void {
  app.register(
    async (plugin) => {
      const sdk = plugin.withTypeProvider<TypeBoxTypeProvider>();
      // CORS preflight carries no X-Company value, so it is answered for any origin some company or channel lists;
      // the real request is then checked against that company's or channel's own list.
      sdk.options('/*', async (request, reply) => {
        const origin = request.headers.origin;
        if (!origin || !(await admitsSomewhere(request, deps, origin))) {
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
          const s = await resolveSdkSession(request, deps.companies, deps.channels);
          enforceOrigin(request, reply, s, deps.ownOriginsFor(request));
          const visitor = identifyVisitor(request, s, deps.identity);
          if (visitor) s.visitor = await deps.visitors.remember(s.company.id, s.sessionId, visitor);
          request.sdkSession = s;
        } catch (err) {
          await exposeErrorToKnownOrigin(request, reply, deps, err);
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
          await deps.limiter.enforce(
            [
              { key: `conv:s:${s.sessionId}`, limit: deps.limits.conversationsPerMinutePerSession },
              { key: `conv:ip:${request.ip}`, limit: deps.limits.conversationsPerMinutePerIp },
            ],
            'conversations created',
          );
          const employeeId =
            s.channel?.digitalEmployeeId ??
            (await deps.conversations.defaultDigitalEmployee(s.company.id)).id;
          const conversation = await deps.conversations.create(scopeOf(s), employeeId, s.visitor, start);
          // A greeting's announcement feeds the agents' inbox; without one, the inbox learns of it here.
          if (!(await deps.greeter.postGreeting(conversation)))
            void deps.inbox.changed(conversation.id, conversation.companyId);
          if (!start.realtimeTokens) return reply.status(201).send(conversationView(conversation));
          // Asked for (`realtime_tokens: true`): the answers of connect-token and subscribe-token ride along, so the
          // SDK opens a chat with one request instead of three (docs/design.md "Webchat REST"; both routes stay).
          const connect = connectTokenOf(deps, s);
          const subscribe = subscriptionTokenOf(deps, s, conversation);
          return reply
            .status(201)
            .header('cache-control', 'no-store')
            .send({
              ...conversationView(conversation),
              realtime_tokens: {
                connection_token: connect.connection_token,
                connection_expires_in: connect.expires_in,
                subscription_token: subscribe.subscription_token,
                subscription_expires_in: subscribe.expires_in,
              },
            });
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
          const conversations = await deps.conversations.listForSession(scopeOf(session(request)));
          return { conversations: await sdkViews(deps, conversations) };
        },
      );

      sdk.get(
        '/conversations/:id',
        { schema: { ...sdkDocs('Read one conversation'), params: Type.Object({ id: Type.String() }) } },
        async (request) =>
          (await sdkViews(deps, [await ownConversation(deps.conversations, request, request.params.id)]))[0],
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
          const conversation = await ownConversation(deps.conversations, request, request.params.id);
          return readMessagePage(deps, conversation.id, request.query);
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
          return reply.header('cache-control', 'no-store').send(connectTokenOf(deps, session(request)));
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
          const conversation = await ownConversation(
            deps.conversations,
            request,
            request.body.conversation_id,
          );
          return reply
            .header('cache-control', 'no-store')
            .send(subscriptionTokenOf(deps, session(request), conversation));
        },
      );

      registerSdkFeedbackRoutes(sdk, deps);
      registerSdkRoutingRoutes(sdk, deps);
      registerSdkAttachmentRoutes(sdk, deps);

      // PARLEY_PUBLIC_URL when configured; in development the host this request came in on, so a page opened at
      // http://127.0.0.1:8080 is not sent to ws://localhost:8080.
      // `business_hours`: whether the company's agents are in now and when they are next (docs/routing.md), so the
      // widget can say when a person is back before the visitor asks for one.
      sdk.get(
        '/config',
        { schema: sdkDocs('Where the realtime endpoint is; whether agents are in') },
        async (request) => {
          const base = deps.publicUrlFor(request);
          return {
            business_hours: openingView(await deps.routingSettings.get(session(request).company.id)),
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

/** The answer of `POST /sdk/v1/auth/connect-token`: the session's realtime connection token (15 minutes). */
function connectTokenOf(deps: Pick<SdkRoutesDeps, 'signer'>, s: SdkSession) {
  const token = deps.signer.connectionToken(realtimeSubjectOf(s), {
    company_id: s.company.id,
    channel_id: s.channel?.id ?? null,
  });
  return { connection_token: token, expires_in: CONNECTION_TOKEN_TTL_SECONDS };
}

/** The answer of `POST /sdk/v1/auth/subscribe-token` for a conversation the session owns (24 hours). */
function subscriptionTokenOf(deps: Pick<SdkRoutesDeps, 'signer'>, s: SdkSession, conversation: Conversation) {
  const channel = channelOf(conversation.companyId, conversation.id);
  const token = deps.signer.subscriptionToken(realtimeSubjectOf(s), channel);
  return { subscription_token: token, expires_in: SUBSCRIPTION_TOKEN_TTL_SECONDS, channel };
}

/** `{}` is what the SDK sends; server-side callers may also send no body at all. */
/**
 * The optional body of a new conversation (docs/design.md "Agent workspace"): the visitor's custom `attributes`
 * (limits in @parley/webchat-protocol visitor-attributes.ts; a verified token's own attributes win) and the
 * `page_url` it starts on (http(s), at most 2048 characters), both shown to agents; `realtime_tokens: true` asks
 * for the session's connection token and the new conversation's subscription token in the answer. Anything else is
 * ignored.
 */
function startOptions(body: unknown): {
  attributes?: VisitorAttributes;
  pageUrl?: string;
  realtimeTokens: boolean;
} {
  requireEmptyOrObject(body);
  const {
    attributes,
    page_url: pageUrl,
    realtime_tokens: realtimeTokens,
  } = (body ?? {}) as { attributes?: unknown; page_url?: unknown; realtime_tokens?: unknown };
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
  return {
    attributes: reading.attributes,
    ...(typeof pageUrl === 'string' ? { pageUrl } : {}),
    realtimeTokens: realtimeTokens === true,
  };
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
  deps: Pick<SdkRoutesDeps, 'ownOriginsFor' | 'channels'>,
  err: unknown,
): Promise<void> {
  const origin = request.headers.origin;
  if (!origin || (err as { code?: string }).code === 'origin_not_allowed') return;
  if (await admitsSomewhere(request, deps, origin)) setCorsHeaders(reply, origin);
}

/** Whether this server's own origin or some company's or channel's list admits `origin` (preflight and errors). */
async function admitsSomewhere(
  request: FastifyRequest,
  deps: Pick<SdkRoutesDeps, 'ownOriginsFor' | 'channels'>,
  origin: string,
): Promise<boolean> {
  return deps.ownOriginsFor(request).includes(origin) || deps.channels.isKnownOrigin(origin);
}
