import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { Config } from '../config/schema.ts';
import { NotFoundError } from '../errors/app-error.ts';
import { publicUrlFor } from '../http/public-url.ts';
import type { App } from '../http/types.ts';
import { type DemoDeps, type DemoSetup, ensureDemo } from './demo-company.ts';
import { type DemoTarget, demoPage } from './demo-page.ts';
import { prebuiltWidget } from './prebuilt-assets.ts';

const DemoQuery = Type.Object({ company: Type.Optional(Type.String({ maxLength: 100 })) });
const AssetParams = Type.Object({ file: Type.String({ maxLength: 100 }) });

/** A year: the chat and the stylesheet are named by their content's hash, so a name never changes meaning. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * `GET /widget.js`: the widget's launcher (packages/widget), and `GET /widget/{chat.<hash>.js | widget.<hash>.css}`:
 * the chat it loads when the visitor opens it (the SDK, centrifuge, markdown and the views, an ES module) and its
 * stylesheet for browsers without constructable stylesheets. The production build's files, or from sources bundled
 * by esbuild on the first request and kept in memory (nothing written to disk). Sites on any origin load them: CORS
 * and CORP allow it (a module script is fetched in CORS mode).
 * `GET /demo`: a page with the widget configured for the "Demo" company, created on first visit (or for the
 * company named by `?company=`).
 */
export function registerWidgetAssets(app: App, ctx: DemoDeps & { config: Config }): void {
  let built: Promise<ServedAssets> | null = null;
  const loadAssets = () => {
    built ??= loadWidgetAssets().catch((err) => {
      built = null; // A failed build is retried by the next request instead of being cached.
      throw err;
    });
    return built;
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
    const { launcher, etag } = await loadAssets();
    reply
      .header('content-type', 'text/javascript; charset=utf-8')
      // Short: a new release reaches pages within minutes (the launcher names the new chat's hash).
      .header('cache-control', 'public, max-age=300')
      .header('etag', etag)
      // Sites on other origins embed this script; a CORP of same-origin would block it there.
      .header('cross-origin-resource-policy', 'cross-origin');
    if (request.headers['if-none-match'] === etag) return reply.status(304).send();
    return reply.send(launcher);
  });

  app.get('/widget/:file', { schema: { hide: true, params: AssetParams } }, async (request, reply) => {
    const assets = await loadAssets();
    const asset = assets.files.get(request.params.file);
    if (!asset)
      throw new NotFoundError(
        'route_not_found',
        'No such widget asset (the page may have an old /widget.js).',
      );
    return reply
      .header('content-type', asset.contentType)
      .header('cache-control', IMMUTABLE)
      .header('access-control-allow-origin', '*')
      .header('cross-origin-resource-policy', 'cross-origin')
      .header('x-content-type-options', 'nosniff')
      .send(asset.code);
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

interface ServedAssets {
  launcher: string;
  etag: string;
  /** The chat module and the stylesheet by their hashed names. */
  files: Map<string, { code: string; contentType: string }>;
}

/** The production build's widget files, or the widget bundled from sources now. */
async function loadWidgetAssets(): Promise<ServedAssets> {
  const prebuilt = prebuiltWidget();
  const { launcher, chat, css } =
    prebuilt ?? (await (await import('@parley/widget/build')).buildWidgetAssets());
  return {
    launcher,
    etag: `"${createHash('sha256').update(launcher).digest('base64url').slice(0, 27)}"`,
    files: new Map([
      [chat.name, { code: chat.code, contentType: 'text/javascript; charset=utf-8' }],
      [css.name, { code: css.code, contentType: 'text/css; charset=utf-8' }],
    ]),
  };
}
