import type { AppContext } from '../context.ts';
import type { App } from '../http/types.ts';
import { registerBearerAuth } from './bearer-auth.ts';
import { oauthServices } from './oauth.services.ts';
import { registerTokenRoutes } from './token.routes.ts';
import { registerWellKnownRoutes } from './well-known.routes.ts';

/**
 * The OAuth capability: loads (or creates) the signing keys and starts their periodic reload, installs the
 * app-wide bearer hook, and registers the token endpoint and the discovery documents.
 */
export async function registerOAuth(app: App, ctx: AppContext): Promise<void> {
  await oauthServices(ctx).keys.start();
  registerBearerAuth(app, ctx);
  await registerTokenRoutes(app, ctx);
  registerWellKnownRoutes(app, ctx);
}
