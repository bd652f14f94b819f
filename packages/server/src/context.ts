import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import { AuditLog } from './audit/audit.service.ts';
import { CompaniesService } from './companies/companies.service.ts';
import { createCompanyCache } from './companies/company-cache.ts';
import type { Config } from './config/schema.ts';
import { loadMasterKeys, watchMasterKeyFile, withPrimary } from './crypto/master-keys.ts';
import type { SealedColumn } from './crypto/sealed-columns.ts';
import { Sealer } from './crypto/sealing.ts';
import { ActionsService } from './digital-employees/actions/actions.service.ts';
import { createDigitalEmployees } from './digital-employees/digital-employees.module.ts';
import type { DigitalEmployeesService } from './digital-employees/digital-employees.service.ts';
import type { EventRecorder } from './events/domain-events.ts';
import { CONNECTOR_SEALED_COLUMNS } from './integrations/connector-key.ts';
import type { ConnectorsService } from './integrations/connectors.service.ts';
import { createIntegrations } from './integrations/integrations.module.ts';
import type { OutboundClient } from './integrations/outbound.ts';
import { Scheduler } from './jobs/scheduler.ts';
import { KnowledgeService } from './knowledge/knowledge.service.ts';
import { Metrics } from './metrics/metrics.ts';
import { createOAuthServices, OAUTH_SEALED_COLUMNS, type OAuthServices } from './oauth/oauth.services.ts';
import { createPrivacy, type Privacy } from './privacy/privacy.module.ts';
import { createRateLimiter, type RateLimiter } from './ratelimit/index.ts';
import { type FinishedQuery, openStore, type Store } from './storage/database.ts';
import { migrateToLatest } from './storage/migrate.ts';
import { RecentErrors } from './system/recent-errors.ts';
import { SystemView } from './system/system.service.ts';
import { createTracing, type Tracing } from './tracing/tracing.ts';
import { SessionsService } from './users/sessions.service.ts';
import { UsersService } from './users/users.service.ts';
import { IDENTITY_SEALED_COLUMNS } from './webchat/identity/identity.sealed-columns.ts';
import { createWebchat, type Webchat } from './webchat/webchat.ts';
import { WebhookOutbox } from './webhooks/outbox.ts';
import { WEBHOOK_SEALED_COLUMNS } from './webhooks/webhook-secret.ts';
import { createWebhooks, type Webhooks } from './webhooks/webhooks.module.ts';
import { createWorkspace, type Workspace } from './workspace/workspace.ts';

/**
 * The composition root's product: every service of the process, each built once, in dependency order, by
 * `createContext` (server or CLI command; tests build one per test server). Capabilities receive what they need
 * from here; nothing is located or registered behind the reader's back. Building starts no background work: the
 * server starts what must run (`app.ts`), and `close` stops everything in reverse order.
 */
export interface AppContext {
  config: Config;
  store: Store;
  logger: Logger;
  sealer: Sealer;
  /** Every column holding sealed values (master-key rotation and status), as each capability declares them. */
  sealedColumns: readonly SealedColumn[];
  audit: AuditLog;
  /** Shared counters for abuse limits: Redis with REDIS_URL (all nodes count together), else in memory. */
  rateLimiter: RateLimiter;
  companies: CompaniesService;
  users: UsersService;
  /** Portal sign-in sessions (the portal throttles failed sign-ins itself: packages/server/src/portal-api/login-throttle.ts). */
  portal: { sessions: SessionsService };
  oauth: OAuthServices;
  digitalEmployees: DigitalEmployeesService;
  /** Actions of digital employees: what an `openai` employee may call through `http` connectors. */
  actions: ActionsService;
  /** Integration connectors and their write-only keys (src/integrations/). */
  connectors: ConnectorsService;
  /** The one outbound client for calls to connectors (reads the current key at call time). */
  connectorCaller: OutboundClient;
  /** Channels, conversations, messages, the realtime and conversation engines, agent commands (src/webchat/). */
  webchat: Webchat;
  /** The agent workspace: statuses, snooze, labels, the inbox list's filters, the visitor panel, mentions. */
  workspace: Workspace;
  /** The portal's system view: nodes, connections, replies in flight, recent errors (src/system/). */
  system: SystemView;
  /** Where changes record their webhook events, in their own transactions (src/webhooks/outbox.ts). */
  events: EventRecorder;
  /** Event webhooks: endpoints, their deliveries and the dispatcher that sends them (src/webhooks/). */
  webhooks: Webhooks;
  /** Erasure, export and retention of visitors' data (src/privacy/, docs/privacy.md). */
  privacy: Privacy;
  /** Knowledge sources, their passages and search (src/knowledge/); every digital employee answers from it. */
  knowledge: KnowledgeService;
  /** Prometheus metrics every capability reports into (src/metrics/). */
  metrics: Metrics;
  /** OpenTelemetry spans (src/tracing/); a pass-through unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  tracing: Tracing;
  /** Background jobs run on one node of the cluster at a time (src/jobs/): the attachment sweeper. */
  scheduler: Scheduler;
  /** Closed in reverse order of registration when the process shuts down. */
  onClose(fn: () => Promise<void> | void): void;
  close(): Promise<void>;
}

export interface ContextOptions {
  /** PostgreSQL schema (tests isolate themselves with one). */
  schema?: string;
  /** Where the logger's warnings and errors are kept for the system view (main.ts feeds it from the log stream). */
  recentErrors?: RecentErrors;
  /**
   * Milliseconds since the epoch for portal session expiry, the in-memory rate limits and the scheduled jobs
   * (Date.now); tests pass a clock they move instead of waiting for time to pass.
   */
  clock?: () => number;
}

export async function createContext(
  config: Config,
  logger: Logger,
  options: ContextOptions = {},
): Promise<AppContext> {
  // A data folder that appears while building is new: said once, with its path, so a mistyped PARLEY_DATA_DIR (or a
  // copy run from elsewhere) never silently starts a second database and master key (docs/config.md "The data folder").
  const dataDirExisted = existsSync(config.dataDir);
  const metrics = new Metrics();
  const tracing = await createTracing(config.otel);
  const dbSystem = config.databaseUrl ? 'postgresql' : 'sqlite';
  // Every statement passes here: while tracing is off (the default) only the metric is taken.
  const onQuery = tracing.enabled
    ? (query: FinishedQuery) => {
        metrics.storeQuery(query);
        tracing.recordSpan(
          'db.query',
          query.startedAt,
          query.endedAt,
          () => ({
            'db.system.name': dbSystem,
            'db.query.text': query.sql,
          }),
          query.failed,
        );
      }
    : (query: FinishedQuery) => metrics.storeQuery(query);
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    schema: options.schema,
    connectTimeoutMs: config.storeConnectTimeoutMs,
    poolSize: config.storePoolSize,
    queryTimeoutMs: config.storeQueryTimeoutMs,
    onIdleError: (err) =>
      logger.warn({ err: { message: err.message } }, 'a pooled database connection failed'),
    onQuery,
  });
  // Closed last (the list runs backwards): spans of the shutdown itself are still exported.
  const closers: Array<() => Promise<void> | void> = [() => tracing.shutdown(), () => store.close()];
  const closeAll = async () => {
    for (const fn of closers.reverse().splice(0)) {
      try {
        await fn();
      } catch (err) {
        logger.error({ err }, 'error while closing');
      }
    }
  };
  try {
    const applied = await migrateToLatest(store);
    if (applied.length > 0) logger.info({ migrations: applied, store: store.describe }, 'database migrated');

    const masterKeys = loadMasterKeys(config.masterKeys, config.dataDir);
    if (masterKeys.generated) {
      logger.warn(
        { file: masterKeys.source },
        'generated a master key in the data folder; set PARLEY_MASTER_KEYS (see docs/config.md) for production',
      );
    }
    const companyCache = createCompanyCache(config, store, logger);
    closers.push(() => companyCache.stop());
    const companies = new CompaniesService(store.db, companyCache);
    // File-based keys are re-read when `master-key rotate` changes the file, so a live server follows a rotation.
    const primary = config.masterKeyPrimary;
    const sealer = new Sealer(
      withPrimary(masterKeys.keys, primary),
      masterKeys.source === 'config'
        ? undefined
        : watchMasterKeyFile(config.dataDir, {
            primary,
            onInvalid: (err) =>
              logger.warn(
                { err, file: masterKeys.source },
                'the changed master key file cannot be used; keeping the previous master keys',
              ),
          }),
    );
    const audit = new AuditLog(store.db);
    const rateLimiter = createRateLimiter(config.redisUrl, config.rateLimit.keyPrefix, {
      logger,
      ...(options.clock ? { clock: options.clock } : {}),
    });
    closers.push(() => rateLimiter.close());
    const users = new UsersService(store.db);
    const events = new WebhookOutbox(store.dialect, companyCache);
    const integrations = createIntegrations({ config, store, sealer, audit, logger, events, tracing });
    closers.push(() => integrations.close());
    const oauth = createOAuthServices({
      config,
      store,
      sealer,
      audit,
      companies,
      logger,
      rateLimiter,
      fetchJwks: integrations.fetch,
      clock: options.clock,
    });
    closers.push(() => oauth.close());
    const knowledge = new KnowledgeService(
      store.db,
      store.dialect,
      audit,
      integrations.fetch,
      config.knowledge,
      companyCache,
    );
    const digitalEmployees = createDigitalEmployees(store, companies, integrations.connectors);
    const actions = new ActionsService(store.db, integrations.connectors);
    const scheduler = new Scheduler({
      db: store.db,
      logger,
      // A test's clock also drives the scheduled jobs (the snooze wake-up among them): moving it makes them due.
      ...(options.clock ? { clock: options.clock } : {}),
      onRun: (job, outcome) => metrics.jobRuns.inc({ job, outcome }),
    });
    closers.push(() => scheduler.stop());
    const webchat = createWebchat({
      config,
      logger,
      store,
      companies,
      digitalEmployees,
      actions,
      connectorCaller: integrations.outbound,
      knowledge,
      audit,
      sealer,
      rateLimiter,
      events,
      metrics,
      tracing,
      onClose: (fn) => closers.push(fn),
      scheduler,
    });
    const workspace = createWorkspace({
      store,
      events,
      audit,
      scheduler,
      logger,
      findConversation: (companyId, id) => webchat.commands.find(companyId, id),
      inboxFeed: webchat.inbox,
      engine: webchat.engine,
      realtime: webchat.realtime,
      notes: webchat.notes,
    });
    // Every note goes through the workspace's writer from here on, so its @mentions notify the agents named.
    webchat.notes = workspace.notes;
    const privacy = createPrivacy({
      store,
      realtime: webchat.realtime,
      attachments: webchat.attachments,
      audit,
      events,
      logger,
      metrics,
      scheduler,
      latePublishMs: config.webchat.erasureLatePublishMs,
    });
    const webhooks = createWebhooks({
      store,
      sealer,
      audit,
      logger,
      fetch: integrations.fetch,
      destinations: integrations.destinations,
      companyCache,
    });
    closers.push(() => webhooks.drain(0));
    if (!dataDirExisted && existsSync(config.dataDir)) {
      logger.warn({ dataDir: config.dataDir }, 'created a new data folder (PARLEY_DATA_DIR)');
    }
    return {
      config,
      store,
      logger,
      sealer,
      sealedColumns: [
        ...OAUTH_SEALED_COLUMNS,
        ...CONNECTOR_SEALED_COLUMNS,
        ...IDENTITY_SEALED_COLUMNS,
        ...WEBHOOK_SEALED_COLUMNS,
      ],
      audit,
      rateLimiter,
      companies,
      users,
      portal: {
        sessions: new SessionsService(
          store.db,
          users,
          {
            ttlSeconds: config.portal.sessionTtlSeconds,
            idleSeconds: config.portal.sessionIdleSeconds,
          },
          options.clock,
        ),
      },
      oauth,
      connectors: integrations.connectors,
      connectorCaller: integrations.outbound,
      digitalEmployees,
      actions,
      webchat,
      workspace,
      system: new SystemView({
        realtime: webchat.realtime,
        store,
        webhooks: webhooks.service,
        recentErrors: options.recentErrors ?? new RecentErrors(),
      }),
      events,
      webhooks,
      privacy,
      knowledge,
      metrics,
      tracing,
      scheduler,
      onClose: (fn) => closers.push(fn),
      close: closeAll,
    };
  } catch (err) {
    // Whatever was opened before the failure (store, outbound sockets) is closed; the cause is what is thrown.
    await closeAll();
    throw err;
  }
}

/**
 * Starts the background work a serving process needs (a CLI command needs none): the signing keys are loaded (or
 * created) and re-read periodically, so a rotation made elsewhere is picked up; the webchat connects its broker and
 * works the reply line (a node alone first takes over what the previous process left); the webhook dispatcher
 * starts sending; the scheduled jobs start polling. Stopped by `ctx.close()`.
 */
export async function startServices(ctx: AppContext): Promise<void> {
  await ctx.oauth.keys.start();
  await ctx.oauth.revocations.start();
  await ctx.companies.cache.start();
  await ctx.webchat.serve();
  await ctx.webhooks.serve();
  ctx.scheduler.start();
}
