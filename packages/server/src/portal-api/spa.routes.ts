import { fileURLToPath } from 'node:url';
import type { FastifyReply } from 'fastify';
import type { App } from '../http/types.ts';

const PORTAL_ENTRY = fileURLToPath(new URL('../../../portal/src/main.ts', import.meta.url));

interface Bundle {
  js: string;
  css: string;
}

let bundle: Promise<Bundle> | undefined;

/**
 * The portal SPA is TypeScript without a framework, bundled by esbuild's JS API on first request and kept in
 * memory (no build step, no committed output). A failed build is not cached, so a fixed source is picked up.
 */
export function portalBundle(): Promise<Bundle> {
  bundle ??= buildBundle().catch((err) => {
    bundle = undefined;
    throw err;
  });
  return bundle;
}

async function buildBundle(): Promise<Bundle> {
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
  // The inbox's WebSocket goes to the public URL with a ws(s) scheme (named explicitly: not every browser counts
  // ws: as 'self').
  const websocket = new URL(publicUrl).origin.replace(/^http/, 'ws');
  return {
    'content-security-policy': `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' ${websocket}; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
}

/** `/portal`, its client-side routes (`/portal/…` → index.html) and the two bundled assets. */
export function registerSpaRoutes(app: App, publicUrl: () => string): void {
  const withSecurity = (reply: FastifyReply) => reply.headers(securityHeaders(publicUrl()));
  const index = async (_request: unknown, reply: FastifyReply) =>
    withSecurity(reply).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(INDEX_HTML);
  app.get('/', index);
  app.get('/assets/app.js', async (_request, reply) => {
    const { js } = await portalBundle();
    return withSecurity(reply)
      .header('cache-control', 'no-cache')
      .type('text/javascript; charset=utf-8')
      .send(js);
  });
  app.get('/assets/app.css', async (_request, reply) => {
    const { css } = await portalBundle();
    return withSecurity(reply).header('cache-control', 'no-cache').type('text/css; charset=utf-8').send(css);
  });
  for (const page of [
    '/sign-in',
    '/api-clients',
    '/connectors',
    '/company',
    '/channels',
    '/digital-employees',
    '/audit',
    '/inbox',
  ]) {
    app.get(page, index);
  }
}
