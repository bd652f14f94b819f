import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify from 'fastify';
import type { AppContext } from './context.ts';
import { registerProblemHandlers } from './errors/problem.ts';
import { registerHealthRoutes } from './health/health.routes.ts';
import { AccessLogController } from './http/access-log.ts';
import { registerOpenApi } from './http/openapi.ts';
import type { App } from './http/types.ts';
import { registerConnectorRoutes } from './integrations/connectors.routes.ts';
import { registerOAuth } from './oauth/oauth.routes.ts';
import { registerWhoamiRoute } from './platform/whoami.routes.ts';
import { registerPortal } from './portal-api/portal.routes.ts';
import { registerWebchat } from './webchat/webchat.ts';
import { registerWidgetAssets } from './widget-assets/widget-assets.routes.ts';

export interface BuiltApp {
  app: App;
  /** Flip to true at the start of a graceful shutdown: /readyz then answers 503. */
  readiness: { shuttingDown: boolean };
}

/**
 * The whole HTTP surface, registered explicitly in one place. Reads as a table of contents: each capability
 * registers its routes from its own folder.
 */
export async function buildApp(ctx: AppContext): Promise<BuiltApp> {
  const app = Fastify({
    loggerInstance: ctx.logger,
    logController: new AccessLogController(),
    trustProxy: ctx.config.trustProxy,
    bodyLimit: 1024 * 1024,
    // Request ids in logs and problem bodies let operators correlate a report with a log line.
    requestIdHeader: false,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: true } },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
  const readiness = { shuttingDown: false };

  registerProblemHandlers(app);
  await registerOpenApi(app, ctx);

  registerHealthRoutes(app, ctx, readiness);
  // OAuth first: its app-wide bearer hook guards every route that declares config.requiredScope.
  await registerOAuth(app, ctx);
  registerWhoamiRoute(app);
  await registerConnectorRoutes(app, ctx);
  // Webchat: SDK REST, platform conversations, and the realtime engine on /connection/websocket (same port).
  const webchat = await registerWebchat(app, ctx);
  // Portal after webchat: its agent inbox drives the webchat's conversation engine.
  await registerPortal(app, ctx, webchat);
  registerWidgetAssets(app, ctx);

  return { app, readiness };
}
