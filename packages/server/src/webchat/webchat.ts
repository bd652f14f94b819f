import type { AuditLog } from '../audit/audit.service.ts';
import type { CompaniesService } from '../companies/companies.service.ts';
import type { Config } from '../config/schema.ts';
import type { AppContext } from '../context.ts';
import { createResponder } from '../digital-employees/responders/create-responder.ts';
import { greetingFor } from '../digital-employees/responders/responder.ts';
import type { App } from '../http/types.ts';
import { rateLimiterFor } from '../ratelimit/index.ts';
import { connectRedis } from '../storage/redis-client.ts';
import { AbuseLimits } from './abuse-limits.ts';
import { ChannelsService } from './channels/channels.service.ts';
import {
  ABANDONED_REPLY_MARGIN_MS,
  ConversationEngine,
  type ReplySource,
} from './conversations/conversation-engine.ts';
import { ConversationsService } from './conversations/conversations.service.ts';
import { LiveSnapshots } from './conversations/live-snapshots.ts';
import { LOCAL_REPLY_TURNS, RedisReplyTurns, type ReplyTurns } from './conversations/reply-turns.ts';
import { MessageStore } from './messages/message-store.ts';
import { startRealtime } from './realtime/realtime-host.ts';
import { loadTokenSecret } from './realtime/token-secret.ts';
import { RealtimeTokenSigner } from './realtime/tokens.ts';
import { registerPlatformConversationRoutes } from './routes/platform.routes.ts';
import { registerSdkRoutes } from './routes/sdk.routes.ts';

/** Everything the webchat routes and hooks share, built once per server by `registerWebchat`. */
export interface Webchat {
  config: Config['webchat'];
  /** Read per use: a test server learns its public URL only after listen. */
  publicUrl(): string;
  companies: CompaniesService;
  channels: ChannelsService;
  conversations: ConversationsService;
  store: MessageStore;
  live: LiveSnapshots;
  engine: ConversationEngine;
  signer: RealtimeTokenSigner;
  limiter: AbuseLimits;
  audit: AuditLog;
}

/**
 * The webchat capability: SDK REST (`/sdk/v1`), platform conversation routes, the realtime engine on
 * `/connection/websocket` (same port, via the HTTP server's `upgrade` event) and the conversation engine that
 * streams replies. Messages left partial by a crash are completed before the server starts serving.
 */
export async function registerWebchat(app: App, ctx: AppContext): Promise<Webchat> {
  const { config, store, logger } = ctx;
  const secret = loadTokenSecret(config.webchat.tokenSecret, config.dataDir);
  if (secret.generated) {
    logger.warn(
      'generated the realtime token secret in the data folder; set PARLEY_REALTIME_TOKEN_SECRET on multi-node deployments',
    );
  }
  const conversations = new ConversationsService(store.db);
  const channels = new ChannelsService(store.db);
  const messages = new MessageStore(store.db);
  const live = new LiveSnapshots();
  const limiter = new AbuseLimits(rateLimiterFor(ctx), logger);
  const replies: ReplySource = {
    findEmployee: (companyId, id) => ctx.digitalEmployees.find(companyId, id),
    responderFor: (employee) => createResponder(employee, { connectors: ctx.connectorCaller }),
    greetingFor: (employee) => greetingFor(employee),
  };

  const turns = replyTurnsFor(ctx);
  const realtime = await startRealtime({
    app,
    ctx,
    secret: secret.secret,
    conversations,
    channels,
    limiter,
    engine: () => engine,
  });
  const engine = new ConversationEngine({
    conversations,
    store: messages,
    broadcaster: realtime.broadcaster,
    live,
    replies,
    logger: logger.child({ module: 'webchat' }),
    flushIntervalMs: config.webchat.streamFlushIntervalMs,
    persistIntervalMs: config.webchat.streamPersistIntervalMs,
    responderTimeoutMs: config.webchat.responderTimeoutMs,
    turns,
  });
  // Handovers and closes made through another node stop this node's reply too.
  await turns.onInterrupt((conversationId, reason) => engine.stopReply(conversationId, reason));
  // Before the HTTP server stops accepting (preClose): replies end with their final envelopes, then the WebSockets
  // close with a reconnect code — upgraded sockets would otherwise keep the HTTP server's close waiting.
  const stop = async () => {
    await engine.shutdown();
    await realtime.close();
  };
  app.addHook('preClose', stop);
  ctx.onClose(stop);

  // One node alone (no Redis): whatever is partial was left by a crash. In a cluster, other nodes may be streaming.
  await engine.completeAbandonedReplies({ onlyOlderThanTimeout: config.redisUrl !== undefined });
  engine.startAbandonedReplySweeper();

  const webchat: Webchat = {
    config: config.webchat,
    publicUrl: () => config.publicUrl,
    companies: ctx.companies,
    channels,
    conversations,
    store: messages,
    live,
    engine,
    signer: new RealtimeTokenSigner(secret.secret),
    limiter,
    audit: ctx.audit,
  };
  registerSdkRoutes(app, webchat);
  registerPlatformConversationRoutes(app, webchat);
  return webchat;
}

/**
 * One node (no Redis): the engine's own queue orders replies. A cluster: the line and turn of each conversation in
 * Redis, on a connection of their own, closed with the context. A turn lives as long as the longest reply can.
 */
function replyTurnsFor(ctx: AppContext): ReplyTurns {
  const { redisUrl, webchat } = ctx.config;
  if (!redisUrl) return LOCAL_REPLY_TURNS;
  const redis = connectRedis(redisUrl);
  const turns = new RedisReplyTurns(redis, {
    prefix: `${webchat.realtimeRedisPrefix}:`,
    turnTtlMs: webchat.responderTimeoutMs + ABANDONED_REPLY_MARGIN_MS,
    logger: ctx.logger.child({ module: 'webchat' }),
  });
  ctx.onClose(async () => {
    await turns.close();
    await redis.quit().catch(() => redis.disconnect());
  });
  return turns;
}
