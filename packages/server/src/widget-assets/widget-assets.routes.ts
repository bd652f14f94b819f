import { createHash } from 'node:crypto';
import type { AppContext } from '../context.ts';
import type { App } from '../http/types.ts';
import { type DemoSetup, ensureDemo } from './demo-company.ts';
import { demoPage } from './demo-page.ts';

interface Bundle {
  code: string;
  etag: string;
}

/**
 * `GET /widget.js`: the embeddable widget (packages/widget with the SDK and centrifuge), bundled by esbuild on the
 * first request and kept in memory — no build step, nothing written to disk. `GET /demo`: a page with the widget
 * configured for the "Demo" company, created on first visit.
 */
export function registerWidgetAssets(app: App, ctx: AppContext): void {
  let bundle: Promise<Bundle> | null = null;
  const loadBundle = () => {
    bundle ??= buildBundle().catch((err) => {
      bundle = null; // A failed build is retried by the next request instead of being cached.
      throw err;
    });
    return bundle;
  };
  let demo: Promise<DemoSetup> | null = null;
  const loadDemo = () => {
    demo ??= ensureDemo(ctx).catch((err) => {
      demo = null;
      throw err;
    });
    return demo;
  };

  app.get('/widget.js', { schema: { hide: true } }, async (request, reply) => {
    const { code, etag } = await loadBundle();
    reply
      .header('content-type', 'text/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=300')
      .header('etag', etag)
      // Sites on other origins embed this script; a CORP of same-origin would block it there.
      .header('cross-origin-resource-policy', 'cross-origin');
    if (request.headers['if-none-match'] === etag) return reply.status(304).send();
    return reply.send(code);
  });

  app.get('/demo', { schema: { hide: true } }, async (_request, reply) => {
    const setup = await loadDemo();
    return reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(demoPage(setup, ctx.config.publicUrl));
  });
}

async function buildBundle(): Promise<Bundle> {
  const { buildWidgetBundle } = await import('@parley/widget/build');
  const code = await buildWidgetBundle();
  return { code, etag: `"${createHash('sha256').update(code).digest('base64url').slice(0, 27)}"` };
}
