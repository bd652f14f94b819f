import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../testing/test-server.ts';
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

test('GET /demo creates the Demo company and channel once and embeds the widget for them', async () => {
  const page = await (await fetch(`${server.baseUrl}/demo`)).text();
  await fetch(`${server.baseUrl}/demo`);
  const demos = (await server.ctx.companies.list()).filter((c) => c.name === DEMO_COMPANY_NAME);
  assert.equal(demos.length, 1, 'idempotent');
  const { ChannelsService } = await import('../webchat/channels/channels.service.ts');
  const channels = (await new ChannelsService(server.ctx.store.db).list(demos[0]!.id)).filter(
    (c) => c.name === DEMO_CHANNEL_NAME,
  );
  assert.equal(channels.length, 1);
  assert.ok(channels[0]!.allowedOrigins.includes(new URL(server.baseUrl).origin));
  assert.ok(
    page.includes(
      `<script src="/widget.js" data-company="${demos[0]!.id}" data-channel="${channels[0]!.id}"></script>`,
    ),
  );
});
