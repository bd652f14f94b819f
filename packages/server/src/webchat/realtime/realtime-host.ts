import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  type Broker,
  type ConnectingContext,
  createRealtimeEngine,
  DisconnectError,
  MemoryBroker,
  RedisBroker,
} from '@parley/realtime';
import type { AppContext } from '../../context.ts';
import type { App } from '../../http/types.ts';
import type { AbuseLimits } from '../abuse-limits.ts';
import type { ChannelsService } from '../channels/channels.service.ts';
import type { Broadcaster } from '../conversations/broadcaster.ts';
import type { ConversationEngine } from '../conversations/conversation-engine.ts';
import type { ConversationsService } from '../conversations/conversations.service.ts';
import { allowedOriginsOf, isOriginAllowed } from '../routes/sdk-session.ts';
import { type ConnectionStorage, createPublishHook } from './publish-hook.ts';
import type { ConnectionMeta } from './tokens.ts';
import { TurnTaker } from './turns.ts';

export const WEBSOCKET_PATH = '/connection/websocket';

/** The `messages` namespace: 100 publications kept for 1 hour with recovery (spec "Limits"), publish by subscribers. */
export const MESSAGES_NAMESPACE = {
  name: 'messages',
  history_size: 100,
  history_ttl: '1h',
  force_recovery: true,
  allow_publish_for_subscriber: true,
  // No publication_data_format check: the publish hook validates client data itself, and the server's own
  // envelopes need no second JSON parse on every streamed partial.
};

/** Terminal application close code (4500–4999, research/centrifuge-protocol.md §3.3): the browser origin is refused. */
export const ORIGIN_REFUSED_CLOSE = 4503;

export interface RealtimeHostOptions {
  app: App;
  ctx: AppContext;
  secret: string;
  conversations: ConversationsService;
  channels: ChannelsService;
  limiter: AbuseLimits;
  /** Resolved lazily: the conversation engine is built with this host's broadcaster. */
  engine: () => ConversationEngine;
}

export interface RealtimeHost {
  broadcaster: Broadcaster;
  /** Closes every WebSocket with a reconnect code (3001 shutdown) and releases the broker. Idempotent. */
  close(): Promise<void>;
}

/**
 * Visitor publications started per event-loop turn (see TurnTaker). One costs about 0.3–0.8 ms on SQLite, so a turn
 * holds the loop for at most ~15 ms before replies already streaming get their timers run.
 */
const PUBLICATIONS_PER_TURN = 8;

/**
 * Composes the realtime engine into the server: HS256 tokens signed by the webchat, the `messages` namespace, the
 * memory broker by default or Redis when REDIS_URL is set, the Origin policy of the company or channel named in the
 * connection token, and the SendMessage publish hook. Upgrades on `/connection/websocket` share the HTTP port.
 */
export async function startRealtime(options: RealtimeHostOptions): Promise<RealtimeHost> {
  const { app, ctx, channels } = options;
  const { config, logger } = ctx;
  const broker: Broker = config.redisUrl
    ? new RedisBroker({ url: config.redisUrl, prefix: config.webchat.realtimeRedisPrefix })
    : new MemoryBroker();
  const turns = new TurnTaker(PUBLICATIONS_PER_TURN);
  const handlePublication = createPublishHook({
    conversations: options.conversations,
    get engine() {
      return options.engine();
    },
    limits: options.limiter,
    config: config.webchat,
  });

  const realtime = await createRealtimeEngine({
    broker,
    closeBroker: true,
    token: { hmacSecretKeys: [options.secret] },
    namespaces: [MESSAGES_NAMESPACE],
    disallowAnonymousConnectionTokens: true,
    websocketPath: WEBSOCKET_PATH,
    logger: logger.child({ module: 'realtime' }),
    hooks: {
      // Origins are checked per company/channel in onConnecting, once the token says which one is meant.
      checkOrigin: () => true,
      onConnecting: async (context: ConnectingContext) => {
        const meta = context.token?.meta as ConnectionMeta | undefined;
        if (!meta?.company_id) throw new DisconnectError(3500, 'invalid token');
        if (context.origin !== undefined) {
          const company = await ctx.companies.find(meta.company_id);
          const channel = meta.channel_id ? await channels.find(meta.company_id, meta.channel_id) : undefined;
          const ownOrigin = new URL(config.publicUrl).origin;
          if (
            !company ||
            !isOriginAllowed(context.origin, allowedOriginsOf({ company, channel }, ownOrigin))
          ) {
            throw new DisconnectError(ORIGIN_REFUSED_CLOSE, 'origin not allowed');
          }
        }
        const storage: ConnectionStorage = {
          ip: remoteIp(context.request, config.trustProxy),
          companyId: meta.company_id,
        };
        return { storage: storage as unknown as Record<string, unknown> };
      },
      onPublish: (context) => turns.run(() => handlePublication(context)),
    },
  });
  // Idempotent: the factory may already have started it (broker connected, timers running).
  await realtime.start();

  app.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (new URL(request.url ?? '/', 'http://x').pathname !== WEBSOCKET_PATH) {
      socket.destroy();
      return;
    }
    realtime.handleUpgrade(request, socket, head);
  });
  ctx.onClose(() => realtime.close());

  return {
    close: () => realtime.close(),
    broadcaster: {
      publish: async (channel, envelope, { history }) => {
        await realtime.publish({ channel, rawData: JSON.stringify(envelope), skipHistory: !history });
      },
    },
  };
}

function remoteIp(request: IncomingMessage, trustProxy: boolean): string {
  const forwarded = trustProxy ? request.headers['x-forwarded-for'] : undefined;
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
  return first || request.socket.remoteAddress || 'unknown';
}
