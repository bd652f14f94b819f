import { fileURLToPath } from 'node:url';
import { SPA_PATHS } from '@parley/portal/pages';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../http/types.ts';
import { prebuiltAsset } from '../widget-assets/prebuilt-assets.ts';

const PORTAL_ENTRY = fileURLToPath(new URL('../../../portal/src/main.ts', import.meta.url));

interface Bundle {
  js: string;
  css: string;
}

let bundle: Promise<Bundle> | undefined;

/**
 * The portal SPA is TypeScript without a framework: the production build (`npm run build`) serves the bundle it
 * wrote; from sources it is bundled by esbuild's JS API on first request and kept in memory (no committed output).
 * A failed build is not cached, so a fixed source is picked up.
 */
export function portalBundle(): Promise<Bundle> {
  bundle ??= loadBundle().catch((err) => {
    bundle = undefined;
    throw err;
  });
  return bundle;
}

async function loadBundle(): Promise<Bundle> {
  const js = prebuiltAsset('portal.js');
  const css = prebuiltAsset('portal.css');
  return js !== undefined && css !== undefined ? { js, css } : buildPortalBundle();
}

/** Bundles the portal SPA (script and stylesheet) with esbuild; also what `npm run build` writes to dist/assets. */
export async function buildPortalBundle(): Promise<Bundle> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [PORTAL_ENTRY],
    bundle: true,
    write: false,
    outdir: '/portal-assets',
    entryNames: 'app',
    format: 'iife',
    target: 'es2020',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const find = (ext: string) => result.outputFiles.find((f) => f.path.endsWith(ext))?.text ?? '';
  return { js: find('.js'), css: find('.css') };
}

const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Parley portal</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/portal/assets/app.css">
<script src="/portal/assets/app.js" defer></script>
</head>
<body><div id="app" aria-live="polite"></div></body>
</html>
`;

/**
 * Strict CSP: only our own script and style, no inline code, no framing (clickjacking), no form posts elsewhere.
 * `connect-src 'self'` limits the SPA's fetches to this origin.
 */
function securityHeaders(publicUrl: string): Record<string, string> {
  // The inbox's WebSocket goes to the URL its realtime grant names (the public URL, or in development this request's
  // own origin) with a ws(s) scheme, named explicitly: not every browser counts ws: as 'self'.
  const websocket = new URL(publicUrl).origin.replace(/^http/, 'ws');
  return {
    'content-security-policy': `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' ${websocket}; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
}

/** Where registerPortal mounts these routes (portal.routes.ts). */
const PORTAL_PREFIX = '/portal';

/**
 * `/portal`, its client-side routes (`/portal/…` → index.html) and the two bundled assets. `publicUrlFor` gives the
 * base URL this request's page is handed (http/public-url.ts).
 */
export function registerSpaRoutes(app: App, publicUrlFor: (request: FastifyRequest) => string): void {
  const withSecurity = (request: FastifyRequest, reply: FastifyReply) =>
    reply.headers(securityHeaders(publicUrlFor(request)));
  const index = async (request: FastifyRequest, reply: FastifyReply) =>
    withSecurity(request, reply)
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .send(INDEX_HTML);
  for (const [path, part, type] of [
    ['/assets/app.js', 'js', 'text/javascript; charset=utf-8'],
    ['/assets/app.css', 'css', 'text/css; charset=utf-8'],
  ] as const) {
    app.get(path, async (request, reply) =>
      withSecurity(request, reply)
        .header('cache-control', 'no-cache')
        .type(type)
        .send((await portalBundle())[part]),
    );
  }
  // Every page of the portal's router (pages.ts): a reload or a link to any of them gets the SPA, never a 404.
  for (const path of SPA_PATHS) app.get(path.slice(PORTAL_PREFIX.length) || '/', index);
}
