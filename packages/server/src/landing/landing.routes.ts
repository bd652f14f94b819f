import type { App } from '../http/types.ts';
import { FAVICON_SVG, faviconIco } from './favicon.ts';
import { LANDING_HTML } from './landing-page.ts';

/**
 * No script at all, styles and images from this origin only, never framed: the page needs nothing else, so
 * anything else that turned up in it could only be an injection.
 */
const LANDING_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The icon changes with a release at most: a day in caches, revalidated after. */
const ICON_CACHE = 'public, max-age=86400';

/** `GET /` (landing-page.ts), and the icon as `/favicon.svg` and `/favicon.ico` (favicon.ts). */
export function registerLandingRoutes(app: App): void {
  const ico = faviconIco();
  app.get('/', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .headers({
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-cache',
        'content-security-policy': LANDING_CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
      })
      .send(LANDING_HTML),
  );
  app.get('/favicon.svg', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .headers({
        'content-type': 'image/svg+xml',
        'cache-control': ICON_CACHE,
        // An SVG opened on its own is a document: it may run nothing.
        'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
        'x-content-type-options': 'nosniff',
      })
      .send(FAVICON_SVG),
  );
  app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .headers({
        'content-type': 'image/x-icon',
        'cache-control': ICON_CACHE,
        'x-content-type-options': 'nosniff',
      })
      .send(ico),
  );
}
