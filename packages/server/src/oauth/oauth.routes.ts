import type { App } from '../http/types.ts';
import { registerBearerAuth } from './bearer-auth.ts';
import { registerApiQuotas } from './client-quotas.ts';
import { type OAuthRouteDeps, registerTokenRoutes } from './token.routes.ts';
import { registerWellKnownRoutes } from './well-known.routes.ts';

/**
 * The OAuth capability's HTTP surface: the app-wide bearer and API-quota hooks, the token endpoint and the
 * discovery documents. (The signing keys are loaded and reloaded by the services the server starts: context.ts `startServices`.)
 */
export async function registerOAuth(app: App, deps: OAuthRouteDeps): Promise<void> {
  // Before the bearer hook, so its step runs after the bearer step (client-quotas.ts registerApiQuotas).
  registerApiQuotas(app, deps.oauth.quotas);
  registerBearerAuth(app, deps.oauth.verifier, { proofs: deps.oauth.dpop, config: deps.config });
  await registerTokenRoutes(app, deps);
  registerWellKnownRoutes(app, deps.oauth.keys, deps.config);
}
