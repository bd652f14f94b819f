import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { DEMO_CHANNEL_NAME, DEMO_COMPANY_NAME } from './demo-company.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => server.close());

test('GET /widget.js serves the bundled widget, cached in memory with an ETag', async () => {
  const first = await fetch(`${server.baseUrl}/widget.js`);
  assert.equal(first.status, 200);
  assert.match(first.headers.get('content-type') ?? '', /^text\/javascript/);
  const code = await first.text();
  assert.ok(code.includes('data-parley-widget'), 'the widget code is in the bundle');
  assert.ok(!code.includes('import '), 'a self-contained script, no module imports left');
  const etag = first.headers.get('etag');
  assert.ok(etag);
  const again = await fetch(`${server.baseUrl}/widget.js`);
  assert.equal(await again.text(), code);
  const notModified = await fetch(`${server.baseUrl}/widget.js`, { headers: { 'if-none-match': etag } });
  assert.equal(notModified.status, 304);
});

test('GET /widget/{chat.<hash>.js} serves the chat module the launcher names, long-cached and open to every origin', async () => {
  const launcher = await (await fetch(`${server.baseUrl}/widget.js`)).text();
  const name = launcher.match(/chat\.[\w-]{16}\.js/)?.[0];
  assert.ok(name, 'the launcher names its chat module');
  const chat = await fetch(`${server.baseUrl}/widget/${name}`, {
    headers: { origin: 'https://shop.example' },
  });
  assert.equal(chat.status, 200);
  assert.match(chat.headers.get('content-type') ?? '', /^text\/javascript/);
  assert.equal(chat.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  assert.equal(
    chat.headers.get('access-control-allow-origin'),
    '*',
    'a module script is fetched in CORS mode',
  );
  assert.equal(chat.headers.get('cross-origin-resource-policy'), 'cross-origin');
  assert.match(await chat.text(), /export\s*\{/);
  const css = launcher.match(/widget\.[\w-]{16}\.css/)?.[0];
  assert.match(
    (await fetch(`${server.baseUrl}/widget/${css}`)).headers.get('content-type') ?? '',
    /^text\/css/,
  );
  const stale = await fetch(`${server.baseUrl}/widget/chat.0000000000000000.js`);
  assert.equal(stale.status, 404);
  assert.equal((await stale.json()).code, 'route_not_found');
});

test('GET /demo creates the Demo company and channel once and embeds the widget for them', async () => {
  const page = await (await fetch(`${server.baseUrl}/demo`)).text();
  await fetch(`${server.baseUrl}/demo`);
  const demos = (await server.ctx.companies.list()).filter((c) => c.name === DEMO_COMPANY_NAME);
  assert.equal(demos.length, 1, 'idempotent');
  const { ChannelsService } = await import('../webchat/channels/channels.service.ts');
  const channels = (
    await new ChannelsService(server.ctx.store.db, server.ctx.store.dialect).list(demos[0]!.id)
  ).filter((c) => c.name === DEMO_CHANNEL_NAME);
  assert.equal(channels.length, 1);
  assert.ok(channels[0]!.allowedOrigins.includes(new URL(server.baseUrl).origin));
  assert.ok(
    page.includes(
      `<script src="/widget.js" data-company="${demos[0]!.id}" data-channel="${channels[0]!.id}"></script>`,
    ),
  );
});

test('GET /demo?company= embeds the widget of a company that exists, and the Demo company otherwise', async () => {
  const acme = await server.ctx.companies.create('Acme');
  const page = await (await fetch(`${server.baseUrl}/demo?company=${acme.id}`)).text();
  assert.ok(page.includes(`<script src="/widget.js" data-company="${acme.id}"></script>`), 'no channel');
  assert.ok(page.includes('/portal/inbox'), 'says where its conversations go');
  assert.ok(!page.includes('Acme'), 'the company name is not shown to whoever knows the id');

  const demo = (await server.ctx.companies.list()).find((c) => c.name === DEMO_COMPANY_NAME)!;
  for (const asked of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', '<script>']) {
    const res = await fetch(`${server.baseUrl}/demo?company=${encodeURIComponent(asked)}`);
    assert.equal(res.status, 200);
    const fallback = await res.text();
    assert.ok(fallback.includes(`data-company="${demo.id}"`), asked);
    assert.match(fallback, /There is no company with that id/);
    assert.ok(!fallback.includes('<script>'), 'the query never reaches the page');
  }
});
