import type { AppContext } from '../context.ts';
import type { App } from '../http/types.ts';
import { registerBearerAuth } from './bearer-auth.ts';
import { registerTokenRoutes } from './token.routes.ts';
import { registerWellKnownRoutes } from './well-known.routes.ts';

/**
 * The OAuth capability's HTTP surface: the app-wide bearer hook, the token endpoint and the discovery documents.
 * (The signing keys are loaded and reloaded by the services the server starts: context.ts `startServices`.)
 */
export async function registerOAuth(app: App, ctx: AppContext): Promise<void> {
  registerBearerAuth(app, ctx);
  await registerTokenRoutes(app, ctx);
  registerWellKnownRoutes(app, ctx);
}
