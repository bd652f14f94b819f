import cookie from '@fastify/cookie';
import { publicUrlFor } from '../http/public-url.ts';
import type { App } from '../http/types.ts';
import { registerSystemRoutes } from '../system/system.routes.ts';
import type { SystemView } from '../system/system.service.ts';
import { registerApiClientRoutes } from './api-clients.routes.ts';
import { registerAuditRoutes } from './audit.routes.ts';
import { registerCannedResponseRoutes } from './canned-responses.routes.ts';
import { registerChannelRoutes } from './channels.routes.ts';
import { registerCompanyRoutes } from './company.routes.ts';
import { registerConnectorRoutes } from './connectors.routes.ts';
import { registerDigitalEmployeeRoutes } from './digital-employees.routes.ts';
import { registerInboxRoutes } from './inbox.routes.ts';
import { registerKnowledgeRoutes } from './knowledge.routes.ts';
import { type PortalDeps, portalGate } from './portal-auth.ts';
import { registerPortalPrivacyRoutes } from './privacy.routes.ts';
import { registerRoutingRoutes } from './routing.routes.ts';
import { registerSearchRoutes } from './search.routes.ts';
import { registerSessionRoutes } from './session.routes.ts';
import { registerSpaRoutes } from './spa.routes.ts';
import { registerUserRoutes } from './users.routes.ts';
import { registerWebhookRoutes } from './webhooks.routes.ts';
import { registerWorkspaceRoutes } from './workspace.routes.ts';

/**
 * The portal: the SPA at `/portal` and its JSON API at `/portal/api`, authenticated by a server-side session cookie
 * (separate from API-client bearer tokens). Every API route passes `portalGate` (session, role, CSRF). The pages'
 * routes call the owning capabilities' services; none of their logic lives here.
 */
export async function registerPortal(
  app: App,
  deps: PortalDeps,
  system: Pick<SystemView, 'snapshot'>,
): Promise<void> {
  const { ctx } = deps;
  await app.register(
    async (portal) => {
      await portal.register(cookie);
      // The portal's API is the SPA's private backend, not part of the public API reference at /docs.
      portal.addHook('onRoute', (route) => {
        route.schema = { ...route.schema, hide: true };
      });
      registerSpaRoutes(portal as App, (request) => publicUrlFor(ctx.config, request));
      await portal.register(
        async (api) => {
          api.addHook('onRequest', portalGate(deps.sessions));
          api.addHook('onSend', async (_request, reply) => {
            reply.header('cache-control', 'no-store');
          });
          registerSessionRoutes(api as App, deps);
          registerApiClientRoutes(api as App, deps);
          registerConnectorRoutes(api as App, deps);
          registerWebhookRoutes(api as App, deps);
          registerKnowledgeRoutes(api as App, deps);
          registerCompanyRoutes(api as App, deps);
          registerPortalPrivacyRoutes(api as App, deps);
          registerUserRoutes(api as App, deps);
          registerChannelRoutes(api as App, deps);
          registerDigitalEmployeeRoutes(api as App, deps);
          registerAuditRoutes(api as App, deps);
          registerSystemRoutes(api as App, system);
          registerInboxRoutes(api as App, ctx.webchat, ctx.workspace.service);
          registerWorkspaceRoutes(api as App, ctx.webchat, ctx.workspace, ctx.knowledge);
          registerRoutingRoutes(api as App, ctx.webchat);
          registerCannedResponseRoutes(api as App, ctx.webchat);
          registerSearchRoutes(api as App, ctx.webchat);
        },
        { prefix: '/api' },
      );
    },
    { prefix: '/portal' },
  );
}
