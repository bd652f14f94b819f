import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startChromium, type TestBrowser } from '@parley/testing/browser';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { bearer, fetchPlatformToken } from '@parley/testing/webchat/webchat-fixtures';
import { sitePage, startSite, type TestSite, widgetCompany } from '@parley/testing/widget/site';
import type { Page, Request } from 'playwright-core';

/**
 * The conversation's details in headless Chromium: each message's time, the visitor's sends going from "Sending…"
 * to "Sent" (or "Not sent" with Retry), no thumbs on the greeting or on notices, a "New messages" line where the
 * unread ones begin when the visitor comes back; and the lazy launcher: `/widget.js` alone until the visitor opens
 * the chat, the chat module then fetched once from Parley (long-cached, CORS), and fetched at once when a message
 * waits for a returning visitor. Screenshots in test-artifacts/widget/ (git-ignored).
 */
const artifacts = join(new URL('../../..', import.meta.url).pathname, 'test-artifacts', 'widget');
let server: TestServer;
let site: TestSite;
let shop: { companyId: string; channelId: string };
let platformToken: string;
let browser: TestBrowser;
let page: Page;
const requests: string[] = [];

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  server = await startTestServer();
  site = await startSite();
  shop = await widgetCompany(server, site.url, {
    answers: [{ question: 'Hours', keywords: ['hours'], answer: 'We are open from 9 to 17.' }],
  });
  platformToken = await fetchPlatformToken(server, shop.companyId, ['conversations:write']);
  site.setPage(
    '/shop',
    sitePage(
      `<script src="${server.baseUrl}/widget.js" data-company="${shop.companyId}" data-channel="${shop.channelId}"></script>`,
    ),
  );
  browser = await startChromium({ viewport: { width: 1000, height: 760 } });
  page = browser.page;
  page.on('pageerror', (err) => console.error('page error:', err.message));
  page.on('request', (request: Request) => requests.push(new URL(request.url()).pathname));
});

after(async () => {
  await browser?.close();
  await site?.close();
  await server?.close();
});

const chatModuleRequests = () => requests.filter((path) => /^\/widget\/chat\.[\w-]+\.js$/.test(path));
const conversationId = () =>
  page.evaluate(
    (key) => localStorage.getItem(key),
    `parley:${shop.companyId}:conversation:${shop.channelId}`,
  );

test('the launcher alone loads with the page; the chat module comes from Parley when the visitor opens it', async () => {
  await page.goto(`${site.url}/shop`);
  await page.locator('.launcher').waitFor();
  await page.waitForLoadState('networkidle');
  assert.deepEqual(chatModuleRequests(), [], 'nothing but /widget.js before the visitor acts');
  const [response] = await Promise.all([
    page.waitForResponse((r) => /\/widget\/chat\.[\w-]+\.js$/.test(r.url())),
    page.locator('.launcher').click(),
  ]);
  assert.equal(response.status(), 200);
  assert.equal(response.headers()['cache-control'], 'public, max-age=31536000, immutable');
  assert.equal(response.headers()['access-control-allow-origin'], '*');
  await page.locator('.msg.digital_employee[data-status="complete"]').first().waitFor({ timeout: 20_000 });
  assert.equal(chatModuleRequests().length, 1, 'fetched once');
});

test('times, delivery states, and thumbs only under answers to the visitor', async () => {
  const greeting = page.locator('.msg.digital_employee').first();
  assert.equal(await greeting.locator('.thumb').count(), 0, 'no thumbs on the greeting');
  assert.match((await greeting.locator('time').getAttribute('datetime')) ?? '', /^\d{4}-\d\d-\d\dT/);
  assert.match((await greeting.locator('time').textContent()) ?? '', /\d\d:\d\d/);

  // Sending → Sent: the visitor's message shows "Sending…" until the server has it.
  await page.context().setOffline(true);
  await page.locator('.panel:not([data-connection="connected"])').waitFor({ timeout: 20_000 });
  await page.locator('textarea').fill('What are your hours?');
  await page.keyboard.press('Enter');
  const mine = page.locator('.msg.user').first();
  assert.equal(await mine.locator('.delivery').textContent(), 'Sending…');
  await page.screenshot({ path: join(artifacts, 'conversation-1-sending.png') });
  await page.context().setOffline(false);
  await mine.locator('.delivery', { hasText: 'Sent' }).waitFor({ timeout: 30_000 });
  const answer = page.locator('.msg.digital_employee[data-status="complete"]').nth(1);
  await answer.waitFor({ timeout: 20_000 });
  assert.equal(await answer.locator('.thumb').count(), 2, 'thumbs up and down under the answer');

  // Refused by the server: "Not sent." with Retry.
  await page.locator('textarea').fill('x'.repeat(server.config.webchat.maxMessageBytes + 1));
  await page.keyboard.press('Enter');
  const failed = page.locator('.msg.user.failed');
  await failed.waitFor({ timeout: 20_000 });
  assert.equal(await failed.locator('.delivery').textContent(), 'Not sent.');
  assert.equal(await failed.getByRole('button', { name: 'Retry' }).count(), 1);

  // A notice (the agent joined) carries no thumbs either.
  const id = await conversationId();
  const posted = await http(
    `${server.baseUrl}/platform/v1/conversations/${id}/messages`,
    bearer(platformToken, { author: { name: 'Kim' }, blocks: [{ type: 'markdown', content: 'Kim here.' }] }),
  );
  assert.equal(posted.status, 201);
  await page.locator('.msg.agent[data-status="complete"]').waitFor({ timeout: 20_000 });
  assert.equal(await page.locator('.msg.system .thumb').count(), 0, 'no thumbs on notices');
  assert.equal(await page.locator('.msg.agent .thumb').count(), 2, 'an agent’s answer can be rated');
  await page.screenshot({ path: join(artifacts, 'conversation-2-states.png') });
});

test('a returning visitor with a message waiting: the chat loads at once, and opens on a "New messages" line', async () => {
  // What the open panel shows counts as read (shortly after it arrived); then the visitor leaves.
  await page.waitForFunction(
    () =>
      (window as unknown as { Parley: { widget: { chat: { unreadCount: number } } } }).Parley.widget.chat
        .unreadCount === 0,
  );
  // The widget's count drops at once; the mark reaches the server in a request of its own
  // (packages/webchat-sdk/src/read-state.ts), and the new page view below reads the server's count.
  const id = await conversationId();
  await waitFor(
    'the server to have the visitor’s read mark',
    async () => (await server.ctx.webchat.reads.unreadCounts('visitor', [id!])).get(id!) === 0,
  );
  await page.keyboard.press('Escape');
  await page.locator('.panel').waitFor({ state: 'hidden' });
  for (const content of ['Your parcel left the warehouse.', 'It arrives tomorrow.']) {
    const posted = await http(
      `${server.baseUrl}/platform/v1/conversations/${id}/messages`,
      bearer(platformToken, { author: { name: 'Kim' }, blocks: [{ type: 'markdown', content }] }),
    );
    assert.equal(posted.status, 201);
  }
  await page.locator('.launcher .badge', { hasText: '2' }).waitFor({ timeout: 20_000 });

  // A new page view: the badge comes from one REST call, and the waiting messages fetch the chat without a click.
  requests.length = 0;
  await page.reload();
  await page.locator('.launcher .badge', { hasText: '2' }).waitFor({ timeout: 20_000 });
  await page.waitForFunction(
    () => performance.getEntriesByType('resource').some((e) => /\/widget\/chat\./.test(e.name)),
    undefined,
    { timeout: 10_000 },
  );
  assert.equal(chatModuleRequests().length, 1, 'loaded before the visitor clicks');

  await page.locator('.launcher').click();
  const separator = page.locator('.unread-separator');
  await separator.waitFor({ timeout: 20_000 });
  const after = await separator.evaluate((el) => el.nextElementSibling?.textContent ?? '');
  assert.match(after, /Your parcel left the warehouse\./, 'the line sits above the first unread message');
  assert.equal(await page.locator('.unread-separator').count(), 1);
  await page.screenshot({ path: join(artifacts, 'conversation-3-new-messages.png') });
});
