import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  type Broker,
  type ConnectingContext,
  DisconnectError,
  MemoryBroker,
  RealtimeEngine,
  type RealtimeHooks,
  type RealtimeObserver,
  RedisBroker,
} from '@parley/realtime';
import {
  EMULATION_PATH,
  HTTP_STREAM_PATH,
  INBOX_NAMESPACE_NAME,
  MESSAGES_NAMESPACE_NAME,
  parseChannel,
  SSE_PATH,
  WEBSOCKET_PATH,
} from '@parley/webchat-protocol';
import type { Logger } from 'pino';
import type { CompaniesService } from '../../companies/companies.service.ts';
import type { Config } from '../../config/schema.ts';
import { clientAddressOf } from '../../http/client-address.ts';
import { ownOriginsOfUpgrade } from '../../http/public-url.ts';
import type { App } from '../../http/types.ts';
import { LruCache } from '../../oauth/lru-cache.ts';
import { SpanKind, type Tracing } from '../../tracing/tracing.ts';
import type { AbuseLimits } from '../abuse-limits.ts';
import type { AttachmentsService } from '../attachments/attachments.service.ts';
import type { ChannelsService } from '../channels/channels.service.ts';
import type { Broadcaster } from '../conversations/broadcaster.ts';
import type { ConversationEngine } from '../conversations/conversation-engine.ts';
import type { ConversationsService } from '../conversations/conversations.service.ts';
import type { LiveSnapshots } from '../conversations/live-snapshots.ts';
import { allowedOriginsOf, isOriginAllowed } from '../identity/sdk-session.ts';
import type { InboxFeed } from '../inbox-feed/inbox-feed.ts';
import type { MessageStore } from '../messages/message-store.ts';
import type { ReadMarks } from '../reads/read-marks.ts';
import { assertMaySubscribe } from './channel-access.ts';
import { inFlightOf } from './in-flight.ts';
import { type ConnectionStorage, createPublishHook } from './publish-hook.ts';
import { forRealtime } from './realtime-errors.ts';
import type { ConnectionMeta } from './tokens.ts';
import { TurnTaker } from './turns.ts';

/**
 * The `messages` namespace: 100 publications kept for 1 hour with recovery, publish by subscribers. Only `complete`
 * envelopes enter history, one per message, so this is the spec's "100 messages retained for 1 hour".
 */
const MESSAGES_NAMESPACE = {
  name: MESSAGES_NAMESPACE_NAME,
  history_size: 100,
  history_ttl: '1h',
  force_recovery: true,
  allow_publish_for_subscriber: true,
  // No publication_data_format check: the publish hook validates client data itself, and the server's own
  // envelopes need no second JSON parse on every streamed partial.
};

/**
 * The `inbox` namespace (inbox-feed/): one channel per company for its agents, server publishes only, nothing kept
 * (the inbox reads its list over REST, then follows the channel).
 */
const INBOX_NAMESPACE = { name: INBOX_NAMESPACE_NAME };

/** Terminal application close code (4500–4999, docs/protocol.md "Disconnect codes"): the browser origin is refused. */
const ORIGIN_REFUSED_CLOSE = 4503;

/** What the webchat's realtime hooks work with. */
export interface WebchatHooksDeps {
  config: Config;
  companies: CompaniesService;
  channels: ChannelsService;
  conversations: ConversationsService;
  messages: MessageStore;
  live: LiveSnapshots;
  limiter: AbuseLimits;
  engine: ConversationEngine;
  reads: ReadMarks;
  attachments: AttachmentsService;
  inbox: Pick<InboxFeed, 'visitorTyping'>;
  /** A `realtime.publish` span per visitor publication (stored, queued for a reply). */
  tracing: Tracing;
  /**
   * Where visitor publications wait for their turn (publicationTurns): made by the composition, which also tells
   * the reply streams when publications are waiting (packages/server/src/webchat/webchat.ts).
   */
  turns: TurnTaker;
}

/**
 * Visitor publications started per event-loop turn (see TurnTaker): 8 at first, then as many as keep an event-loop
 * iteration near PUBLICATION_TURN_BUDGET. One costs about 0.45 ms on SQLite with its reply start (a burst of 1,000,
 * profiled); a fixed 8 held an idle node's burst back (its first replies began later than the loop allowed) and was
 * still too many once a thousand replies streamed (32 fixed: first envelope p99 −30 %, gap p99 +60 %).
 */
const PUBLICATIONS_PER_TURN = 8;
/**
 * The iteration aimed at while publications wait: well under the streams' 40 ms coalescing interval, so a reply's
 * next envelope is not held past its turn by more than about this.
 */
const PUBLICATION_TURN_BUDGET = { ms: 8, max: 64 };

/** The turns visitor publications are taken in (see PUBLICATIONS_PER_TURN); its `backlog` is who is waiting. */
export function publicationTurns(): TurnTaker {
  return new TurnTaker(PUBLICATIONS_PER_TURN, PUBLICATION_TURN_BUDGET);
}

/**
 * The webchat's realtime engine, built but not started (nothing connects until `start`): HS256 tokens signed by the
 * webchat, the `messages` namespace, the memory broker by default or Redis when REDIS_URL is set. Its hooks come
 * later (`webchatHooks`), once the conversation engine that publishes through it exists.
 */
export function createWebchatRealtime(
  config: Config,
  logger: Logger,
  secret: string,
  observer?: RealtimeObserver,
): RealtimeEngine {
  const log = logger.child({ module: 'realtime' });
  const broker: Broker = config.redisUrl
    ? new RedisBroker({
        url: config.redisUrl,
        prefix: config.webchat.realtimeRedisPrefix,
        onError: throttled((err) => log.warn({ err: { message: err.message } }, 'Redis connection error')),
      })
    : new MemoryBroker();
  return new RealtimeEngine({
    broker,
    closeBroker: true,
    token: { hmacSecretKeys: [secret] },
    namespaces: [MESSAGES_NAMESPACE, INBOX_NAMESPACE],
    disallowAnonymousConnectionTokens: true,
    websocketPath: WEBSOCKET_PATH,
    httpStreamPath: HTTP_STREAM_PATH,
    ssePath: SSE_PATH,
    emulationPath: EMULATION_PATH,
    logger: log,
    ...(observer ? { observer } : {}),
  });
}

/**
 * Publishes the conversation engine's envelopes through the realtime engine (server-side publish), each snapshot
 * as it leaves the server (`present`: attachment blocks get their signed `url`).
 */
export function realtimeBroadcaster(
  realtime: RealtimeEngine,
  attachments: Pick<AttachmentsService, 'present'>,
): Broadcaster {
  return {
    publish: async (channel, envelope, { history, idempotencyKey }) => {
      const presented = { ...envelope, message_snapshot: attachments.present(envelope.message_snapshot) };
      await realtime.publish({
        channel,
        rawData: JSON.stringify(presented),
        skipHistory: !history,
        ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
      });
    },
  };
}

/**
 * The webchat's hooks on its realtime engine: the Origin policy of the company or channel named in the connection
 * token, the SendMessage publish hook, and the replies in flight in every subscribe result. A store or broker
 * outage in any of them is a temporary 503 for the client (realtime-errors.ts).
 */
export function webchatHooks(deps: WebchatHooksDeps): RealtimeHooks {
  const { config } = deps;
  const { turns } = deps;
  const handlePublication = createPublishHook({
    conversations: deps.conversations,
    engine: deps.engine,
    limits: deps.limiter,
    attachments: deps.attachments,
    inbox: deps.inbox,
    config: config.webchat,
  });

  /** The Origin policy of the company or channel the connection token names; keeps the client IP for limits. */
  const admitConnection = async (context: ConnectingContext) => {
    const meta = context.token?.meta as ConnectionMeta | undefined;
    // A token naming no company (signed by hand with the realtime secret, say) is no valid token.
    if (!meta?.company_id || !(await deps.companies.exists(meta.company_id)))
      throw new DisconnectError(3500, 'invalid token');
    if (context.origin !== undefined && !isGrantedOrigin(context.origin, meta)) {
      const company = await deps.companies.find(meta.company_id);
      const channel = meta.channel_id
        ? await deps.channels.find(meta.company_id, meta.channel_id)
        : undefined;
      if (
        !company ||
        !isOriginAllowed(
          context.origin,
          allowedOriginsOf(
            { company, channel },
            // Parley's own: in development also a page this server served under the upgrade's host name.
            ownOriginsOfUpgrade(config, context.origin, context.request.headers),
          ),
        )
      ) {
        throw new DisconnectError(ORIGIN_REFUSED_CLOSE, 'origin not allowed');
      }
    }
    const storage: ConnectionStorage = {
      ip: clientAddressOf(context.request, config.trustProxy),
      companyId: meta.company_id,
    };
    return { storage: storage as unknown as Record<string, unknown> };
  };

  const knownOrigins = new KnownOrigins(deps.channels);
  return {
    // A WebSocket upgrade: its origin is checked per company or channel in onConnecting, once the token says which
    // is meant, and refused with a terminal close. The HTTP fallbacks answer CORS before any token is read (a
    // preflight carries none), so they admit an origin only as the SDK's REST preflight does: Parley's own, or
    // one some company or channel lists — and their connect meets the same per-token check.
    checkOrigin: (origin, request) =>
      origin === undefined ||
      isWebSocketUpgrade(request) ||
      ownOriginsOfUpgrade(config, origin, request.headers).includes(origin.toLowerCase()) ||
      knownOrigins.has(origin),
    onConnecting: (context: ConnectingContext) =>
      admitConnection(context).catch((err) => {
        throw forRealtime(err);
      }),
    onPublish: (context) =>
      turns.run(() =>
        deps.tracing.inSpan(
          'realtime.publish',
          { kind: SpanKind.SERVER, attributes: { 'messaging.destination.name': context.channel } },
          () => handlePublication(context),
        ),
      ),
    // Completes stored while the broker was away go out now, not on the next retry (conversations/broadcaster.ts).
    onBrokerRestored: () => void deps.engine.announceAgain(),
    // Who owns the channel now (channel-access.ts), then the replies in flight and both read marks
    // (docs/asyncapi.yaml "InFlightMessages"). The engine has registered the subscription before this hook, so an
    // identification that moves the conversation afterwards ends it like any other (endSessionSubscriptions).
    onSubscribing: async ({ client, channel }) => {
      const target = parseChannel(channel);
      const [inFlight, readMarks] = await assertMaySubscribe(deps.conversations, client, channel)
        .then(() =>
          Promise.all([
            inFlightOf(deps.messages, deps.live, channel),
            target ? deps.reads.marksOf(target.conversationId) : undefined,
          ]),
        )
        .catch((err) => {
          throw forRealtime(err);
        });
      return inFlight ? { data: readMarks ? { ...inFlight, read_marks: readMarks } : inFlight } : undefined;
    },
  };
}

/**
 * The WebSocket fallbacks (`/connection/http_stream`, `/connection/sse`, `/emulation`) are plain HTTP requests the
 * engine answers itself: Fastify routes them there untouched (no body parsing, so the engine reads and bounds the
 * body, streams the response and answers CORS preflights as Centrifugo does).
 */
export function registerRealtimeFallbacks(app: App, realtime: RealtimeEngine): void {
  app.register(async (scope) => {
    // The engine reads the body itself (bounded, JSON or Protobuf): no parser may consume the stream first.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    for (const url of [HTTP_STREAM_PATH, SSE_PATH, EMULATION_PATH]) {
      scope.route({
        method: url === SSE_PATH ? ['GET', 'POST', 'OPTIONS'] : ['POST', 'OPTIONS'],
        url,
        schema: { hide: true },
        handler: async (request, reply) => {
          reply.hijack();
          const handled = await realtime.httpHandler(request.raw, reply.raw);
          if (!handled && !reply.raw.headersSent) reply.raw.writeHead(404).end();
        },
      });
    }
  });
}

/** Upgrades to `/connection/websocket` on `server` go to the engine (REST and WebSocket share the port). */
export function attachRealtime(server: Server, realtime: RealtimeEngine): void {
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (new URL(request.url ?? '/', 'http://x').pathname !== WEBSOCKET_PATH) {
      socket.destroy();
      return;
    }
    realtime.handleUpgrade(request, socket, head);
  });
}

const isWebSocketUpgrade = (request: IncomingMessage): boolean =>
  request.headers.upgrade?.toLowerCase() === 'websocket';

/** How long whether an origin is listed is remembered: the fallbacks ask on every `/emulation` request. */
const KNOWN_ORIGIN_TTL_MS = 10_000;

/** Whether some company or channel lists an origin (ChannelsService.isKnownOrigin), remembered briefly. */
class KnownOrigins {
  private readonly answers = new LruCache<string, { known: boolean; until: number }>(1_000);

  constructor(private readonly channels: Pick<ChannelsService, 'isKnownOrigin'>) {}

  async has(origin: string): Promise<boolean> {
    const now = Date.now();
    const cached = this.answers.get(origin);
    if (cached && cached.until > now) return cached.known;
    const known = await this.channels.isKnownOrigin(origin.toLowerCase());
    this.answers.set(origin, { known, until: now + KNOWN_ORIGIN_TTL_MS });
    return known;
  }
}

/** A token granted to one browser origin (the portal's page, ConnectionMeta.origin) admits exactly that origin. */
function isGrantedOrigin(origin: string, meta: ConnectionMeta): boolean {
  return meta.origin !== undefined && origin.toLowerCase() === meta.origin;
}

/** While Redis is down every reconnect attempt fails; one line per 30 s says it without flooding the log. */
function throttled(log: (err: Error) => void): (err: Error) => void {
  let last = 0;
  return (err) => {
    const now = Date.now();
    if (now - last < 30_000) return;
    last = now;
    log(err);
  };
}
