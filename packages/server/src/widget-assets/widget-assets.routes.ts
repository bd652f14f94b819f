import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { prebuiltAsset } from '../build/prebuilt-assets.ts';
import type { AppContext } from '../context.ts';
import { publicUrlFor } from '../http/public-url.ts';
import type { App } from '../http/types.ts';
import { type DemoSetup, ensureDemo } from './demo-company.ts';
import { type DemoTarget, demoPage } from './demo-page.ts';

const DemoQuery = Type.Object({ company: Type.Optional(Type.String({ maxLength: 100 })) });

interface Bundle {
  code: string;
  etag: string;
}

/**
 * `GET /widget.js`: the embeddable widget (packages/widget with the SDK and centrifuge): the production build's
 * file, or from sources bundled by esbuild on the first request and kept in memory (nothing written to disk).
 * `GET /demo`: a page with the widget configured for the "Demo" company, created on first visit (or for the
 * company named by `?company=`).
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

  // `?company=<id>` shows that company's widget (its default digital employee) when the company exists, so a new
  // user can chat with their own company and find the conversation in its portal inbox; else the Demo company.
  app.get('/demo', { schema: { hide: true, querystring: DemoQuery } }, async (request, reply) => {
    const asked = request.query.company;
    const company = asked === undefined ? undefined : await ctx.companies.find(asked);
    const target: DemoTarget = company
      ? { companyId: company.id, asked: 'found' }
      : { ...(await loadDemo()), ...(asked === undefined ? {} : { asked: 'unknown' as const }) };
    return reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(demoPage(target, publicUrlFor(ctx.config, request)));
  });
}

async function buildBundle(): Promise<Bundle> {
  const code =
    prebuiltAsset('widget.js') ?? (await (await import('@parley/widget/build')).buildWidgetBundle());
  return { code, etag: `"${createHash('sha256').update(code).digest('base64url').slice(0, 27)}"` };
}
