import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit.service.ts';
import type { CompaniesService } from '../companies/companies.service.ts';
import type { Config } from '../config/schema.ts';
import type { Sealer } from '../crypto/sealing.ts';
import type { ActionsPort } from '../digital-employees/actions/action-runner.ts';
import type { ActionsService } from '../digital-employees/actions/actions.service.ts';
import type { DigitalEmployeesService } from '../digital-employees/digital-employees.service.ts';
import { createResponder } from '../digital-employees/responders/create-responder.ts';
import { greetingFor } from '../digital-employees/responders/responder.ts';
import type { EventRecorder } from '../events/domain-events.ts';
import type { Readiness } from '../health/health.routes.ts';
import { ownOriginsFor, publicUrlFor } from '../http/public-url.ts';
import type { App } from '../http/types.ts';
import { IdempotencyKeys } from '../idempotency/idempotency-keys.ts';
import type { OutboundClient } from '../integrations/outbound.ts';
import type { Scheduler } from '../jobs/scheduler.ts';
import { type KnowledgeSearch, waitingForStore } from '../knowledge/knowledge-search.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { RateLimiter } from '../ratelimit/index.ts';
import type { Store } from '../storage/database.ts';
import { closeRedis, failFastRedis } from '../storage/redis-client.ts';
import type { Tracing } from '../tracing/tracing.ts';
import { AbuseLimits } from './abuse-limits.ts';
import { AttachmentLinks } from './attachments/attachment-links.ts';
import { AttachmentSweeper } from './attachments/attachment-sweeper.ts';
import {
  registerAttachmentDownloadRoute,
  registerPlatformAttachmentRoutes,
} from './attachments/attachments.routes.ts';
import { AttachmentsService } from './attachments/attachments.service.ts';
import { StoreBlobStore } from './attachments/store-blob-store.ts';
import { UploadQuota } from './attachments/upload-quota.ts';
import { CannedResponsesService } from './canned-responses/canned-responses.service.ts';
import { ChannelsService } from './channels/channels.service.ts';
import type { Conversation } from './conversation.ts';
import { ConversationCommands } from './conversations/conversation-commands.ts';
import { ConversationEngine, type ReplySource } from './conversations/conversation-engine.ts';
import { ConversationsService } from './conversations/conversations.service.ts';
import { LiveSnapshots } from './conversations/live-snapshots.ts';
import {
  NO_HEARTBEATS,
  RedisReplyHeartbeats,
  type ReplyHeartbeats,
} from './conversations/reply-heartbeats.ts';
import { ReplyQueue } from './conversations/reply-queue.ts';
import { LOCAL_REPLY_SIGNALS, RedisReplySignals, type ReplySignals } from './conversations/reply-signals.ts';
import { NO_SHOWN_TEXTS, RedisShownTexts, type ShownTexts } from './conversations/shown-texts.ts';
import { FeedbackService } from './feedback/feedback.service.ts';
import { ChannelIdentity } from './identity/channel-identity.ts';
import { VisitorDirectory } from './identity/visitor-directory.ts';
import { feedingInbox, InboxFeed } from './inbox-feed/inbox-feed.ts';
import { MessageStore } from './messages/message-store.ts';
import { HandoverSummaries, type SummaryModel } from './notes/handover-summary.ts';
import { actionCallNote, NotesService } from './notes/notes.service.ts';
import { ReadMarks } from './reads/read-marks.ts';
import { endSessionSubscriptions } from './realtime/channel-access.ts';
import { loadTokenSecret } from './realtime/token-secret.ts';
import { RealtimeTokenSigner } from './realtime/tokens.ts';
import {
  attachRealtime,
  createWebchatRealtime,
  publicationTurns,
  realtimeBroadcaster,
  registerRealtimeFallbacks,
  webchatHooks,
} from './realtime/webchat-realtime.ts';
import type { MessagePageDeps } from './routes/message-page.ts';
import { registerPlatformConversationRoutes } from './routes/platform.routes.ts';
import { registerSdkRoutes } from './routes/sdk.routes.ts';
import { registerPlatformRoutingRoutes } from './routing/platform-routing.routes.ts';
import { RoutingService } from './routing/routing.service.ts';
import { RoutingSettingsStore } from './routing/routing-settings.ts';
import { ConversationSearch } from './search/conversation-search.ts';
import { registerPlatformSearchRoutes } from './search/search.routes.ts';
import { replyObserver, timedBroadcaster } from './webchat-metrics.ts';
import type { Webchat } from './webchat-services.ts';

export type { Webchat } from './webchat-services.ts';

/** Beyond the HTTP time-outs, how old a blob without its attachment row must be before it counts as abandoned. */
const UPLOAD_GRACE_MS = 5 * 60 * 1000;

export interface WebchatDeps {
  config: Config;
  logger: Logger;
  store: Store;
  companies: CompaniesService;
  digitalEmployees: DigitalEmployeesService;
  actions: ActionsService;
  connectorCaller: OutboundClient;
  /** The company's knowledge, which every digital employee answers from (knowledge/). */
  knowledge?: KnowledgeSearch;
  audit: AuditLog;
  /** Seals the channels' identity secrets at rest. */
  sealer: Sealer;
  rateLimiter: RateLimiter;
  /** Webhook events of conversations, messages and ratings (events/domain-events.ts), in each change's transaction. */
  events: EventRecorder;
  /** Realtime, reply and broker metrics are reported here. */
  metrics: Metrics;
  /** Spans of realtime publications and replies. */
  tracing: Tracing;
  /** Registers what to close with the process (in reverse order). */
  onClose(fn: () => Promise<void> | void): void;
  /** Background jobs that run on one node at a time (the attachment sweeper joins it). */
  scheduler: Scheduler;
}

/**
 * Builds the webchat capability once, in dependency order, for the composition root (context.ts): its stores, the
 * realtime engine, the conversation engine publishing through it, and then the engine's hooks, which call the
 * conversation engine — the one cycle of the capability, closed explicitly by `realtime.setHooks` before anything
 * runs. Nothing connects until `start`.
 */
export function createWebchat(deps: WebchatDeps): Webchat {
  const { config, store, logger } = deps;
  const secret = loadTokenSecret(config.webchat.tokenSecret, config.dataDir);
  if (secret.generated) {
    logger.warn(
      'generated the realtime token secret in the data folder; set PARLEY_REALTIME_TOKEN_SECRET on multi-node deployments',
    );
  }
  const conversations = new ConversationsService(store.db, deps.events, store.writes, deps.digitalEmployees);
  const channels = new ChannelsService(store.db, store.dialect);
  const messages = new MessageStore(store, deps.events);
  const live = new LiveSnapshots();
  const limiter = new AbuseLimits(deps.rateLimiter);
  const webchatLogger = logger.child({ module: 'webchat' });
  // One instance serves the inbox feed (CSAT on conversation rows) and the feedback routes.
  const feedback = new FeedbackService(store.db, deps.events);
  const blobs = new StoreBlobStore(store.db);
  const attachments = new AttachmentsService({
    db: store.db,
    blobs,
    links: new AttachmentLinks(deps.sealer),
    defaultMaxBytes: config.webchat.attachmentMaxBytes,
    publicUrl: () => config.publicUrl,
  });
  deps.scheduler.add(
    new AttachmentSweeper({
      db: store.db,
      blobs,
      unsentTtlMs: config.webchat.unsentAttachmentTtlMs,
      orphanGraceMs: config.http.headersTimeoutMs + config.http.bodyTimeoutMs + UPLOAD_GRACE_MS,
      onDeleted: (what, count) => deps.metrics.attachmentsSwept.inc({ what }, count),
    }),
  );
  // Each action call of a digital employee: audited (never the key) and shown to agents as a note.
  const actionsPort = actionsPortFor(deps, (...args) => notes.addNote(...args));
  const knowledgeForReplies =
    deps.knowledge && waitingForStore(deps.knowledge, { waitMs: config.webchat.replyStoreWaitMs });
  const replies: ReplySource = {
    findEmployee: (companyId, id) => deps.digitalEmployees.find(companyId, id),
    responderFor: (employee) =>
      createResponder(employee, {
        connectors: deps.connectorCaller,
        // Waits out a busy or restarting store like the rest of a reply does, rather than failing the reply.
        knowledge: knowledgeForReplies,
        actions: actionsPort,
      }),
    greetingFor: (employee) => greetingFor(employee),
  };
  const { metrics } = deps;
  const realtime = createWebchatRealtime(config, logger, secret.secret, metrics.realtime.observer);
  metrics.realtime.watch(realtime);
  // Read events and inbox entries are live only: clients read their state over REST or in subscribe results.
  const publishLive = (channel: string, rawData: string) =>
    realtime.publish({ channel, rawData, skipHistory: true }).then(() => undefined);
  const reads = new ReadMarks({
    db: store.db,
    publish: (channel, event) => publishLive(channel, JSON.stringify(event)),
    logger: webchatLogger,
  });
  const queue = new ReplyQueue(store, {
    nodeId: randomBytes(9).toString('base64url'),
    leaseMs: config.webchat.replyLeaseMs,
    stallMs: config.webchat.replyLeaseMs,
  });
  const inbox = new InboxFeed({
    db: store.db,
    conversations,
    reads,
    feedback,
    publish: publishLive,
    // Alone with the memory broker this node knows every subscriber; in a cluster another node's agents may follow.
    ...(config.redisUrl === undefined
      ? { followed: (channel: string) => realtime.hasLocalSubscribers(channel) }
      : {}),
    logger: webchatLogger,
  });
  const { connect: connectCoordination, ...coordination } = replyCoordinationFor(deps, webchatLogger);
  // Visitor publications wait here for their turn; while any wait, the replies already streaming coalesce more
  // (ReplyStream.nextFlushAt), so the waiting visitors' first envelopes come sooner.
  const turns = publicationTurns();
  const engine = new ConversationEngine({
    conversations,
    store: messages,
    broadcaster: timedBroadcaster(feedingInbox(realtimeBroadcaster(realtime, attachments), inbox), metrics),
    live,
    replies,
    logger: webchatLogger,
    flushIntervalMs: config.webchat.streamFlushIntervalMs,
    busy: { now: () => turns.backlog > 0, flushIntervalMs: config.webchat.streamBusyFlushIntervalMs },
    persistIntervalMs: config.webchat.streamPersistIntervalMs,
    responderTimeoutMs: config.webchat.responderTimeoutMs,
    queue,
    ...coordination,
    leaseMs: config.webchat.replyLeaseMs,
    storeWaitMs: config.webchat.replyStoreWaitMs,
    reads,
    present: (snapshot) => attachments.present(snapshot),
    observer: replyObserver(metrics),
    tracing: deps.tracing,
  });
  metrics.watchQueuedReplies(() => queue.size());
  realtime.setHooks(
    webchatHooks({
      config,
      companies: deps.companies,
      channels,
      conversations,
      messages,
      live,
      limiter,
      engine,
      reads,
      attachments,
      inbox,
      tracing: deps.tracing,
      turns,
    }),
  );

  // In a cluster the clients move first (to a node that stays), and this node's last envelopes reach them there
  // through the broker; a node alone keeps its clients until its replies ended, since they have nowhere to go.
  const alone = config.redisUrl === undefined;
  let drained: Promise<void> | undefined;
  const drain = (graceMs: number) => {
    drained ??= (async () => {
      if (!alone) await realtime.drainClients();
      await engine.shutdown(graceMs);
      await realtime.close();
    })();
    return drained;
  };
  deps.onClose(() => drain(0));
  let serving: Promise<void> | undefined;
  // The broker, and in a cluster the reply coordination's connection (its hints reach the other nodes).
  const start = async () => {
    await Promise.all([realtime.start(), connectCoordination()]);
  };
  const routingSettings = new RoutingSettingsStore(store.db);
  const routing = new RoutingService({ db: store.db, dialect: store.dialect, settings: routingSettings });
  const commands = new ConversationCommands({
    conversations,
    engine,
    audit: deps.audit,
    limits: config.webchat,
    attachments,
    routing,
    routingSettings,
    // Every hand-over to a person gets its summary note for agents (notes/handover-summary.ts), in the background.
    onHandedOver: (conversation) => {
      void summaries
        .write(conversation)
        .catch((err) =>
          webchatLogger.warn(
            { conversationId: conversation.id, err: err instanceof Error ? err.message : String(err) },
            'could not write the hand-over summary',
          ),
        );
    },
  });
  const summaries = new HandoverSummaries({
    transcript: async (conversationId, limit) => (await messages.page(conversationId, { limit })).messages,
    latestSummaryAfter: (conversationId) => summaryIsCurrent(store, messages, conversationId),
    modelFor: (conversation) => summaryModelFor(deps, conversation),
    notes: { addNote: (...args) => notes.addNote(...args) },
    logger: webchatLogger,
  });
  const notes = new NotesService({
    companyUsers: (companyId, ids) => companyUserIds(store, companyId, ids),
    conversations,
    store: messages,
    publishLive,
    logger: webchatLogger,
  });
  // A webhook bot's `"handover": true` queues the conversation like the visitor's own request (docs/routing.md).
  engine.onHumanRequested = (conversation) =>
    commands.requestHuman(conversation.companyId, conversation.id, {
      id: `digital_employee:${conversation.digitalEmployeeId}`,
    });

  return {
    config: config.webchat,
    publicUrl: () => config.publicUrl,
    publicUrlFor: (request) => publicUrlFor(config, request),
    ownOriginsFor: (request) => ownOriginsFor(config, request),
    companies: deps.companies,
    channels,
    conversations,
    store: messages,
    live,
    engine,
    signer: new RealtimeTokenSigner(secret.secret),
    limiter,
    identity: new ChannelIdentity({
      db: store.db,
      sealer: deps.sealer,
      audit: deps.audit,
      channels,
      toleranceSeconds: config.oauth.clockToleranceSeconds,
    }),
    visitors: new VisitorDirectory(conversations, endSessionSubscriptions(realtime, webchatLogger)),
    idempotency: new IdempotencyKeys(store, webchatLogger),
    reads,
    feedback,
    inbox,
    audit: deps.audit,
    attachments,
    uploadQuota: new UploadQuota(limiter, {
      bytesPerHourPerSession: config.webchat.uploadBytesPerHourPerSession,
      bytesPerHourPerIp: config.webchat.uploadBytesPerHourPerIp,
    }),
    routing,
    routingSettings,
    notes,
    summaryByModel: async (conversation, messages) => (await summaries.byModel(conversation, messages))?.text,
    cannedResponses: new CannedResponsesService(store.db),
    search: new ConversationSearch(store.db, store.dialect),
    commands,
    realtime,
    clustered: !alone,
    start,
    // One node alone (no Redis) is the only one that could have been replying: what it left is taken over at once.
    serve: () => {
      serving ??= start().then(() => engine.start({ alone }));
      return serving;
    },
    drain,
  };
}

/**
 * The webchat's HTTP surface: SDK REST (`/sdk/v1`), platform conversation routes, the realtime engine on
 * `/connection/websocket` (same port, via the HTTP server's `upgrade` event), the broker's readiness, and the drain
 * that must happen before the HTTP server closes (upgraded sockets would keep it waiting). Each route registration
 * gets the few services it declares (its `…Deps`), picked here by name.
 */
export function registerWebchat(app: App, webchat: Webchat, readiness: Readiness): void {
  attachRealtime(app.server, webchat.realtime);
  registerRealtimeFallbacks(app, webchat.realtime);
  if (webchat.clustered) {
    readiness.checks.broker = async () => {
      if (!webchat.realtime.healthy()) throw new Error('broker unavailable');
    };
  }
  app.addHook('preClose', () => webchat.drain(0));
  const messagePage = messagePageDepsOf(webchat);
  const uploads = { attachments: webchat.attachments, uploadQuota: webchat.uploadQuota };
  registerSdkRoutes(app, {
    ...messagePage,
    ...uploads,
    limits: webchat.config,
    publicUrlFor: webchat.publicUrlFor,
    ownOriginsFor: webchat.ownOriginsFor,
    companies: webchat.companies,
    channels: webchat.channels,
    identity: webchat.identity,
    visitors: webchat.visitors,
    limiter: webchat.limiter,
    conversations: webchat.conversations,
    greeter: webchat.engine,
    inbox: webchat.inbox,
    reads: webchat.reads,
    signer: webchat.signer,
    commands: webchat.commands,
    routingSettings: webchat.routingSettings,
  });
  registerPlatformConversationRoutes(app, {
    ...messagePage,
    conversations: webchat.conversations,
    commands: webchat.commands,
    notes: webchat.notes,
    idempotency: webchat.idempotency,
  });
  registerPlatformRoutingRoutes(app, { commands: webchat.commands, routing: webchat.routing });
  registerPlatformSearchRoutes(app, webchat.search);
  registerPlatformAttachmentRoutes(app, { ...uploads, commands: webchat.commands });
  registerAttachmentDownloadRoute(app, webchat.attachments);
}

/** What reading a page of messages takes (routes/message-page.ts), for the webchat's and the portal's routes. */
export function messagePageDepsOf(webchat: Pick<Webchat, 'store' | 'live' | 'feedback' | 'attachments'>) {
  return {
    messages: webchat.store,
    live: webchat.live,
    feedback: webchat.feedback,
    attachments: webchat.attachments,
  } satisfies MessagePageDeps;
}

/**
 * Whether the conversation's newest hand-over summary is newer than the visitor's last message (then a new hand-over
 * needs no new summary). By the note's kind, not its text: an agent's note quoting the heading is no summary.
 */
async function summaryIsCurrent(
  store: Store,
  messages: MessageStore,
  conversationId: string,
): Promise<boolean> {
  const latestVisitor = store.db
    .selectFrom('messages')
    .select((eb) => eb.fn.max('position').as('p'))
    .where('conversation_id', '=', conversationId)
    .where('role', '=', 'user')
    .executeTakeFirst()
    .then((r) => Number(r?.p ?? 0));
  const [summary, visitor] = await Promise.all([
    messages.latestNoteOfKind(conversationId, 'handover_summary').then((n) => n?.position ?? 0),
    latestVisitor,
  ]);
  return summary > visitor;
}

/** Which of `ids` are portal users of the company (a note's @mentions name only colleagues). */
async function companyUserIds(store: Store, companyId: string, ids: string[]): Promise<Set<string>> {
  const rows = await store.db
    .selectFrom('portal_users')
    .select('id')
    .where('company_id', '=', companyId)
    .where('id', 'in', ids)
    .execute();
  return new Set(rows.map((r) => r.id));
}

/**
 * The model that writes a conversation's hand-over summary (notes/handover-summary.ts): its digital employee's own,
 * when that is an `openai` employee with a connector and a model; none otherwise (the summary is then extractive).
 */
async function summaryModelFor(
  deps: Pick<WebchatDeps, 'digitalEmployees' | 'connectorCaller'>,
  conversation: Conversation,
): Promise<SummaryModel | undefined> {
  const employee = await deps.digitalEmployees.find(conversation.companyId, conversation.digitalEmployeeId);
  if (employee?.responder !== 'openai' || !employee.connectorId || !employee.model) return undefined;
  const { connectorId, model } = employee;
  return {
    employeeId: employee.id,
    employeeName: employee.name,
    complete: async (system, user, signal) => {
      const response = await deps.connectorCaller.fetch(
        conversation.companyId,
        connectorId,
        'chat/completions',
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            model,
            stream: false,
            messages: [
              { role: 'system', content: system },
              { role: 'user', content: user },
            ],
          }),
          signal,
        },
      );
      if (!response.ok) throw new Error(`the model answered HTTP ${response.status}`);
      const body = (await response.json()) as { choices?: Array<{ message?: { content?: unknown } }> };
      const content = body.choices?.[0]?.message?.content;
      if (typeof content !== 'string' || content.trim() === '') throw new Error('the model gave no summary');
      return content;
    },
  };
}

/** What a digital employee's actions report to: each call audited (never the key) and written as a note for agents. */
function actionsPortFor(
  deps: Pick<WebchatDeps, 'actions' | 'audit' | 'config'>,
  addNote: NotesService['addNote'],
): ActionsPort {
  const { config } = deps;
  return {
    listFor: (companyId, employeeId) => deps.actions.listFor(companyId, employeeId),
    timeoutMs: config.webchat.actionTimeoutMs,
    record: async (call) => {
      await deps.audit.record({
        type: 'digital_employee.action_called',
        companyId: call.companyId,
        actor: `digital_employee:${call.digitalEmployeeId}`,
        subject: call.conversationId,
        details: {
          action: call.action,
          connector_id: call.connectorId,
          outcome: call.result.outcome,
          status: call.result.status,
          duration_ms: call.result.durationMs,
        },
      });
      await addNote(call.companyId, call.conversationId, {
        text: actionCallNote(call),
        author: { type: 'digital_employee', id: call.digitalEmployeeId, name: call.digitalEmployeeName },
      });
    },
  };
}

/**
 * What the nodes of a cluster tell each other about replies over Redis, on a connection of their own: hints
 * (reply-signals.ts), heartbeats of running replies (reply-heartbeats.ts) and the texts clients were shown
 * (shown-texts.ts). Nothing on one node. The connection has the outage settings of every other Redis client
 * (packages/server/src/storage/redis-client.ts `failFastRedis`): a command fails at once while Redis is away instead of queueing.
 */
export function replyCoordinationFor(deps: WebchatDeps, logger: Logger): ReplyCoordination {
  const { redisUrl, webchat } = deps.config;
  if (!redisUrl)
    return {
      signals: LOCAL_REPLY_SIGNALS,
      heartbeats: NO_HEARTBEATS,
      shownTexts: NO_SHOWN_TEXTS,
      connect: async () => {},
    };
  const { redis, connect } = failFastRedis(redisUrl);
  const prefix = `${webchat.realtimeRedisPrefix}:`;
  const signals = new RedisReplySignals(redis, { prefix, logger, ready: connect });
  const heartbeats = new RedisReplyHeartbeats(redis, { prefix, leaseMs: webchat.replyLeaseMs });
  const shownTexts = new RedisShownTexts(redis, { prefix });
  deps.onClose(async () => {
    await signals.close();
    await closeRedis(redis);
  });
  return { signals, heartbeats, shownTexts, connect };
}

/** The reply coordination of a cluster, and the step that connects it (the webchat's `start`; building does not). */
interface ReplyCoordination {
  signals: ReplySignals;
  heartbeats: ReplyHeartbeats;
  shownTexts: ShownTexts;
  connect(): Promise<void>;
}
