import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify from 'fastify';
import { type AppContext, startServices } from './context.ts';
import { registerActionRoutes } from './digital-employees/actions/actions.routes.ts';
import { registerDigitalEmployeePortalRoutes } from './digital-employees/digital-employees.portal.routes.ts';
import { type Readiness, registerHealthRoutes } from './health/health.routes.ts';
import { createEdge } from './http/edge.ts';
import { registerOpenApi } from './http/openapi.ts';
import { registerProblemHandlers } from './http/problem.ts';
import { registerResponseObservers } from './http/response-observers.ts';
import type { RouteEntry } from './http/route-methods.ts';
import type { App } from './http/types.ts';
import { registerConnectorPortalRoutes } from './integrations/connectors.portal.routes.ts';
import { registerConnectorRoutes } from './integrations/connectors.routes.ts';
import { registerKnowledgePortalRoutes } from './knowledge/knowledge.portal.routes.ts';
import { registerKnowledgeRoutes } from './knowledge/knowledge.routes.ts';
import { registerLandingRoutes } from './landing/landing.routes.ts';
import { registerMetricsEndpoint, requestMetricsObserver } from './metrics/metrics.routes.ts';
import { registerApiClientRoutes } from './oauth/api-clients.portal.routes.ts';
import { registerOAuth } from './oauth/oauth.routes.ts';
import { registerWhoamiRoute } from './platform/whoami.routes.ts';
import { registerAuditRoutes } from './portal-api/audit.routes.ts';
import { registerPortal } from './portal-api/portal.routes.ts';
import { registerPrivacyPortalRoutes } from './privacy/privacy.portal.routes.ts';
import { registerPrivacyRoutes } from './privacy/privacy.routes.ts';
import { registerSystemRoutes } from './system/system.routes.ts';
import { registerRequestTracing } from './tracing/request-tracing.ts';
import { registerUserRoutes } from './users/users.portal.routes.ts';
import { registerCannedResponsePortalRoutes } from './webchat/canned-responses/canned-responses.portal.routes.ts';
import { registerChannelPortalRoutes } from './webchat/channels.portal.routes.ts';
import { registerCompanyPortalRoutes } from './webchat/company.portal.routes.ts';
import { emptyStats } from './webchat/feedback/feedback.service.ts';
import { registerRoutingPortalRoutes } from './webchat/routing/routing.portal.routes.ts';
import { registerSearchPortalRoutes } from './webchat/search/search.portal.routes.ts';
import { messagePageDepsOf, registerWebchat } from './webchat/webchat.ts';
import { registerWebhookPortalRoutes } from './webhooks/webhooks.portal.routes.ts';
import { registerWebhookRoutes } from './webhooks/webhooks.routes.ts';
import { registerWidgetAssets } from './widget-assets/widget-assets.routes.ts';
import { registerInboxPortalRoutes } from './workspace/inbox.portal.routes.ts';
import { registerPlatformWorkspaceRoutes } from './workspace/workspace.platform.routes.ts';
import { registerWorkspacePortalRoutes } from './workspace/workspace.portal.routes.ts';

export interface BuiltApp {
  app: App;
  readiness: Readiness;
  /**
   * Starts the background work (context.ts `startServices`: signing-key reload, the webchat's broker and reply line,
   * the webhook dispatcher) once the app is ready — every route, hook and schema compiled. Building starts nothing:
   * call it after adding hooks and routes, before `listen`. Started earlier, their first store queries ran while the
   * app was still being built, and that synchronous work (route and schema compilation, seconds on a busy machine)
   * kept the event loop from the new PostgreSQL connection until its time-out had passed: a fresh start logged
   * "could not claim webhook deliveries".
   */
  start(): Promise<void>;
  /** Graceful drain before closing: realtime clients move to other nodes, streaming replies finish (≤ graceMs). */
  drain(graceMs: number): Promise<void>;
  /** Every registered route and method (the edge's index). */
  routes(): RouteEntry[];
}

/**
 * The whole HTTP surface, registered explicitly in one place. Reads as a table of contents: each capability
 * registers its routes from its own folder.
 */
export async function buildApp(ctx: AppContext): Promise<BuiltApp> {
  // Request ids, the access log, NUL/surrogate refusal, 405/OPTIONS and pre-routing errors: one module.
  const edge = createEdge(ctx.logger, ctx.config, {
    refused: (reason) => ctx.metrics.httpRefused.inc({ reason }),
  });
  const app = Fastify({
    loggerInstance: ctx.logger,
    trustProxy: ctx.config.trustProxy,
    bodyLimit: 1024 * 1024,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: true } },
    ...edge.serverOptions,
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
  const readiness: Readiness = {
    shuttingDown: false,
    checks: { database: (timeoutMs) => ctx.store.ping(timeoutMs) },
  };

  // Before any route: the edge's hooks and its onRoute index must see every route.
  edge.register(app);
  // A trace span per request when OTEL_EXPORTER_OTLP_ENDPOINT is set (W3C traceparent accepted); no hooks otherwise.
  const endSpan = registerRequestTracing(app, ctx.tracing);
  // Request counts and durations for every route, then the span's end: one onResponse hook for both.
  registerResponseObservers(app, [requestMetricsObserver(ctx.metrics), endSpan]);
  registerProblemHandlers(app);
  await registerOpenApi(app, ctx.config.publicUrl);

  registerHealthRoutes(app, readiness);
  // GET /metrics behind PARLEY_METRICS_TOKEN, or on a listener of its own (PARLEY_METRICS_PORT).
  await registerMetricsEndpoint(app, ctx.metrics, ctx.config);
  // OAuth first: its app-wide bearer hook guards every route that declares config.requiredScope.
  await registerOAuth(app, {
    oauth: ctx.oauth,
    rateLimiter: ctx.rateLimiter,
    audit: ctx.audit,
    config: ctx.config,
    logger: ctx.logger,
    metrics: ctx.metrics,
    tracing: ctx.tracing,
  });
  registerWhoamiRoute(app);
  await registerConnectorRoutes(app, { connectors: ctx.connectors, connectorCaller: ctx.connectorCaller });
  // Actions and outcomes (docs/outcomes.md) of digital employees.
  registerActionRoutes(app, ctx.actions, ctx.digitalEmployees);
  await registerWebhookRoutes(app, ctx.webhooks.service);
  // Erasure and export of a visitor's data (docs/privacy.md).
  registerPrivacyRoutes(app, ctx.privacy.service);
  await registerKnowledgeRoutes(app, ctx.knowledge);
  // Webchat: SDK REST, platform conversations, and the realtime engine on /connection/websocket (same port).
  registerWebchat(app, ctx.webchat, readiness);
  registerPlatformWorkspaceRoutes(app, ctx.workspace.service);
  // The portal: SPA, sign-in and session gate; each page's routes from its capability, with what it uses.
  await registerPortal(app, {
    config: ctx.config,
    sessions: ctx.portal.sessions,
    users: ctx.users,
    companies: ctx.companies,
    audit: ctx.audit,
    rateLimiter: ctx.rateLimiter,
    pages: portalPagesOf(ctx),
  });
  registerWidgetAssets(app, {
    config: ctx.config,
    companies: ctx.companies,
    digitalEmployees: ctx.digitalEmployees,
    channels: ctx.webchat.channels,
  });
  // `/` (links to the demo, the portal and /docs) and the icon.
  registerLandingRoutes(app);

  const drain = async (graceMs: number) => {
    await Promise.all([ctx.webchat.drain(graceMs), ctx.webhooks.drain(graceMs)]);
  };
  const start = async () => {
    await app.ready();
    await startServices(ctx);
  };
  return { app, readiness, drain, start, routes: edge.routes };
}

/**
 * The portal's pages, each registered from its capability's folder with the few services it declares (`…PortalDeps`),
 * picked here by name; `registerPortal` puts them behind the portal gate on `/portal/api`.
 */
function portalPagesOf(ctx: AppContext): Array<(api: App) => void> {
  const { webchat, audit } = ctx;
  const messagePage = messagePageDepsOf(webchat);
  return [
    (api) => registerApiClientRoutes(api, ctx.oauth),
    (api) =>
      registerConnectorPortalRoutes(api, {
        connectors: ctx.connectors,
        connectorCaller: ctx.connectorCaller,
      }),
    (api) => registerWebhookPortalRoutes(api, ctx.webhooks.service),
    (api) => registerKnowledgePortalRoutes(api, { knowledge: ctx.knowledge }),
    (api) =>
      registerCompanyPortalRoutes(api, { companies: ctx.companies, attachments: webchat.attachments, audit }),
    (api) =>
      registerPrivacyPortalRoutes(api, {
        retention: ctx.privacy.retention,
        visitorData: ctx.privacy.service,
        audit,
      }),
    (api) => registerUserRoutes(api, { users: ctx.users, audit }),
    (api) =>
      registerChannelPortalRoutes(api, {
        channels: webchat.channels,
        identity: webchat.identity,
        digitalEmployees: ctx.digitalEmployees,
        audit,
        publicUrl: () => ctx.config.publicUrl,
      }),
    (api) =>
      registerDigitalEmployeePortalRoutes(api, {
        employees: ctx.digitalEmployees,
        connectors: ctx.connectors,
        ratings: {
          statsByEmployee: (companyId) => webchat.feedback.statsByEmployee(companyId),
          unrated: emptyStats,
        },
        audit,
      }),
    (api) => registerAuditRoutes(api, { audit, users: ctx.users }),
    (api) => registerSystemRoutes(api, ctx.system),
    (api) =>
      registerInboxPortalRoutes(
        api,
        {
          ...messagePage,
          commands: webchat.commands,
          attachments: webchat.attachments,
          uploadQuota: webchat.uploadQuota,
          idempotency: webchat.idempotency,
          inbox: webchat.inbox,
          reads: webchat.reads,
          signer: webchat.signer,
          publicUrlFor: webchat.publicUrlFor,
        },
        ctx.workspace.service,
      ),
    (api) =>
      registerWorkspacePortalRoutes(
        api,
        {
          ...messagePage,
          commands: webchat.commands,
          notes: ctx.workspace.notes,
          summaryByModel: webchat.summaryByModel,
        },
        ctx.workspace,
        ctx.knowledge,
      ),
    (api) =>
      registerRoutingPortalRoutes(api, {
        routing: webchat.routing,
        routingSettings: webchat.routingSettings,
        commands: webchat.commands,
        audit,
      }),
    (api) => registerCannedResponsePortalRoutes(api, { cannedResponses: webchat.cannedResponses, audit }),
    (api) => registerSearchPortalRoutes(api, { search: webchat.search, inbox: webchat.inbox }),
  ];
}
