import cookie from '@fastify/cookie';
import type { AuditLog } from '../audit/audit.service.ts';
import type { CompaniesService } from '../companies/companies.service.ts';
import type { Config } from '../config/schema.ts';
import { publicUrlFor } from '../http/public-url.ts';
import type { App } from '../http/types.ts';
import type { RateLimiter } from '../ratelimit/index.ts';
import { portalGate } from '../users/portal-session.ts';
import type { SessionsService } from '../users/sessions.service.ts';
import type { UsersService } from '../users/users.service.ts';
import { LoginThrottle } from './login-throttle.ts';
import { registerSessionRoutes } from './session.routes.ts';
import { registerSpaRoutes } from './spa.routes.ts';

/**
 * What the portal itself needs — the SPA, sign-in and the session gate — and the pages' routes, each registered by
 * the composition root (app.ts) from its capability's folder with the few services it declares.
 */
export interface PortalDeps {
  config: Pick<Config, 'publicUrl' | 'publicUrlConfigured' | 'portal'>;
  sessions: SessionsService;
  users: Pick<UsersService, 'verifyCredentials'>;
  companies: Pick<CompaniesService, 'get'>;
  audit: Pick<AuditLog, 'record'>;
  /** The shared counters of the failed-sign-in throttle (Redis with REDIS_URL, else in memory). */
  rateLimiter: RateLimiter;
  /** Registers the pages' routes on `/portal/api`, behind the gate (session, role, CSRF). */
  pages: ReadonlyArray<(api: App) => void>;
}

/**
 * The portal: the SPA at `/portal` and its JSON API at `/portal/api`, authenticated by a server-side session cookie
 * (separate from API-client bearer tokens). Every API route passes `portalGate` (session, role, CSRF). The pages'
 * routes live with their capabilities; none of their logic lives here.
 */
export async function registerPortal(app: App, deps: PortalDeps): Promise<void> {
  const { config } = deps;
  // Failed sign-ins are throttled here, by their only user (session.routes.ts).
  const throttle = new LoginThrottle(deps.rateLimiter, {
    perEmail: config.portal.loginFailuresPerEmail,
    perEmailAllIps: config.portal.loginFailuresPerEmailAllIps,
    perIp: config.portal.loginFailuresPerIp,
    windowSeconds: config.portal.loginThrottleWindowSeconds,
  });
  await app.register(
    async (portal) => {
      await portal.register(cookie);
      // The portal's API is the SPA's private backend, not part of the public API reference at /docs.
      portal.addHook('onRoute', (route) => {
        route.schema = { ...route.schema, hide: true };
      });
      registerSpaRoutes(portal as App, (request) => publicUrlFor(config, request));
      await portal.register(
        async (api) => {
          api.addHook('onRequest', portalGate(deps.sessions));
          api.addHook('onSend', async (_request, reply) => {
            reply.header('cache-control', 'no-store');
          });
          registerSessionRoutes(api as App, {
            users: deps.users,
            sessions: deps.sessions,
            throttle,
            companies: deps.companies,
            audit: deps.audit,
            publicUrl: config.publicUrl,
            sessionTtlSeconds: config.portal.sessionTtlSeconds,
          });
          for (const registerPage of deps.pages) registerPage(api as App);
        },
        { prefix: '/api' },
      );
    },
    { prefix: '/portal' },
  );
}
