import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startChromium, type TestBrowser } from '@parley/testing/browser';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { configureIdentity, signVisitorToken } from '@parley/testing/webchat/identity-fixtures';
import { bearer, fetchPlatformToken } from '@parley/testing/webchat/webchat-fixtures';
import type { Page } from 'playwright-core';

/**
 * The widget for a verified visitor in headless Chromium, on an integrator's site — a web server of its own on
 * 127.0.0.1, another origin that the channel allows, whose backend signs the visitor tokens: the same history in a
 * second browser (another profile: another device), rating an answer, the unread badge on the launcher, "Seen", and
 * the satisfaction question when the conversation closes. Screenshots go to test-artifacts/widget/ (git-ignored).
 */
const artifacts = join(new URL('../../..', import.meta.url).pathname, 'test-artifacts', 'widget');
let server: TestServer;
/** The integrator's site: its page is `pages[path]`; `/me/chat-token` is its backend signing a visitor token. */
let shop: Server;
let shopUrl: string;
const pages = new Map<string, string>();
let companyId: string;
let channelId: string;
let secret: string;
let platformToken: string;
const browsers: TestBrowser[] = [];

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  server = await startTestServer();
  shop = createServer((request, response) => {
    if (request.url === '/me/chat-token') {
      void signVisitorToken(secret, 'shopper-1').then((token) => response.end(token));
      return;
    }
    const page = pages.get(request.url ?? '');
    response.writeHead(page ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' }).end(page ?? '');
  });
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
  shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
  companyId = (await server.ctx.companies.create('Shop Co')).id;
  const employee = await server.ctx.digitalEmployees.getDefault(companyId);
  channelId = (
    await server.ctx.webchat.channels.create({
      companyId,
      name: 'Shop',
      digitalEmployeeId: employee.id,
      allowedOrigins: [shopUrl],
    })
  ).id;
  secret = (await configureIdentity(server, companyId, channelId, 'required')).identity_secret!;
  platformToken = await fetchPlatformToken(server, companyId, ['conversations:read', 'conversations:write']);
});

after(async () => {
  await Promise.all(browsers.map((b) => b.close()));
  shop?.close();
  await server?.close();
});

/** The integrator's page: the one-line embed with the visitor token its backend signed, or `Parley.init` with a callback. */
function shopPage(embed: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head>
<body style="font-family:system-ui;margin:40px"><h1>Example shop</h1><p>Signed in as Ada.</p>
${embed}
</body></html>`;
}

async function openShop(path: string, embed: string): Promise<Page> {
  pages.set(path, shopPage(embed));
  const browser = await startChromium({ viewport: { width: 1000, height: 760 } });
  browsers.push(browser);
  const { page } = browser;
  page.on('pageerror', (err) => console.error('page error:', err.message));
  await page.goto(`${shopUrl}${path}`);
  return page;
}

const shot = (page: Page, name: string) => page.screenshot({ path: join(artifacts, `${name}.png`) });
const messages = (page: Page, role: string) => page.locator(`.msg.${role}`);
const completed = (page: Page, role: string, n: number) =>
  messages(page, role)
    .nth(n - 1)
    .and(page.locator('[data-status="complete"]'))
    .waitFor({ timeout: 20_000 });

let first: Page;
let conversationId: string;

test('an identified visitor sees the same history in a second browser, and messages reach both', async () => {
  const token = await signVisitorToken(secret, 'shopper-1', {
    claims: { name: 'Ada', email: 'ada@example.com' },
  });
  first = await openShop(
    '/account',
    `<script src="${server.baseUrl}/widget.js" data-company="${companyId}" data-channel="${channelId}" data-visitor-token="${token}"></script>`,
  );
  await first.locator('.launcher').click();
  await completed(first, 'digital_employee', 1);
  await first.locator('textarea').fill('Where is my order #123?');
  await first.keyboard.press('Enter');
  await completed(first, 'digital_employee', 2);
  await shot(first, 'identity-1-first-browser');
  const rows = await http(`${server.baseUrl}/platform/v1/conversations`, bearer(platformToken));
  conversationId = rows.body.conversations[0].id;
  assert.deepEqual(rows.body.conversations[0].visitor, {
    id: 'shopper-1',
    name: 'Ada',
    email: 'ada@example.com',
    attributes: {},
  });

  // Another browser (its own profile: nothing stored) with Parley.init and a token callback, as an SPA embeds it.
  const second = await openShop(
    '/app',
    `<script src="${server.baseUrl}/widget.js" data-company="${companyId}" data-channel="${channelId}"></script>
<script>Parley.init({ open: true, getVisitorToken: () => fetch('/me/chat-token').then((r) => r.text()) });</script>`,
  );
  await completed(second, 'digital_employee', 2);
  assert.deepEqual(
    await second.locator('.msg .body').allTextContents(),
    await first.locator('.msg .body').allTextContents(),
    'the same conversation, message for message',
  );
  await second.locator('textarea').fill('Sent from my other browser');
  await second.keyboard.press('Enter');
  await messages(first, 'user')
    .filter({ hasText: 'Sent from my other browser' })
    .waitFor({ timeout: 15_000 });
  await completed(first, 'digital_employee', 3);
  await shot(second, 'identity-2-second-browser');
  // The other device reads what it shows; the tests below are about the first one alone.
  await browsers.pop()!.close();
});

test('the visitor rates an answer with the keyboard and adds a comment', async () => {
  const answer = messages(first, 'digital_employee').nth(1);
  const up = answer.getByRole('button', { name: 'Helpful', exact: true });
  assert.equal(await up.getAttribute('aria-pressed'), 'false');
  await up.focus();
  await first.keyboard.press('Enter');
  await answer.getByRole('button', { name: 'Helpful', exact: true, pressed: true }).waitFor();
  assert.equal(
    await answer.getByRole('button', { name: 'Not helpful', exact: true }).getAttribute('aria-pressed'),
    'false',
  );
  await answer.getByRole('textbox', { name: 'Tell us more (optional)' }).fill('Found my parcel, thanks');
  await answer.getByRole('button', { name: 'Send' }).click();
  await answer.getByText('Thanks for your feedback!').waitFor();
  await shot(first, 'identity-3-rated-answer');
  const stored = await waitFor('the rating', () =>
    server.ctx.store.db.selectFrom('message_feedback').selectAll().executeTakeFirst(),
  );
  assert.deepEqual([stored.rating, stored.comment], ['up', 'Found my parcel, thanks']);
  // Answers to the visitor can be rated; the visitor's own messages, the greeting and system notices cannot.
  assert.equal(
    await messages(first, 'user').getByRole('button', { name: 'Helpful', exact: true }).count(),
    0,
  );
});

test('unread replies show on the launcher while the panel is closed, also after a reload; opening reads them', async () => {
  await first.keyboard.press('Escape');
  await first.locator('.panel').waitFor({ state: 'hidden' });
  const posted = await http(
    `${server.baseUrl}/platform/v1/conversations/${conversationId}/messages`,
    bearer(platformToken, { blocks: [{ type: 'markdown', content: 'Kim here: your parcel ships today.' }] }),
  );
  assert.equal(posted.status, 201);
  const badge = first.locator('.launcher .badge');
  // The notice that the agent joined and the answer arrive as two publications: the badge counts 1, then 2.
  await badge.filter({ hasText: /^2$/ }).and(first.locator(':visible')).waitFor({ timeout: 15_000 });
  assert.equal(await badge.textContent(), '2', 'the agent joined (a notice) and answered');
  assert.equal(await first.locator('.launcher').getAttribute('aria-label'), 'Open chat (2 unread)');
  await shot(first, 'identity-4-unread-badge');

  await first.reload();
  await badge.and(first.locator(':visible')).waitFor({ timeout: 15_000 });
  assert.equal(await badge.textContent(), '2', 'read from the server before the chat opens');
  await first.locator('.launcher').click();
  await badge.waitFor({ state: 'hidden' });
  await messages(first, 'agent').first().waitFor({ timeout: 15_000 });
  const listed = await waitFor('the server to have the mark', async () => {
    const res = await http(`${server.baseUrl}/sdk/v1/conversations`, {
      headers: {
        'x-session-id': crypto.randomUUID(),
        'x-company': companyId,
        'x-channel-id': channelId,
        'x-visitor-token': await signVisitorToken(secret, 'shopper-1'),
      },
    });
    const item = res.body.conversations.find((c: { id: string }) => c.id === conversationId);
    return item.unread_count === 0 && item;
  });
  assert.equal(listed.unread_count, 0);
});

test('"Seen" appears under the visitor’s last message once an agent has read it', async () => {
  const conversation = await server.ctx.webchat.conversations.find(conversationId);
  await server.ctx.webchat.reads.markAgentRead(conversation!);
  const seen = first.locator('.msg.user .seen');
  await seen.waitFor({ timeout: 15_000 });
  assert.equal(await seen.count(), 1, 'only under the last one');
  assert.equal(
    await messages(first, 'user').last().locator('.seen').textContent(),
    'Seen',
    'the last visitor message carries it',
  );
  await shot(first, 'identity-5-seen');
});

test('closing the conversation asks for a rating from 1 to 5 (keyboard operable), then thanks', async () => {
  const closed = await http(
    `${server.baseUrl}/platform/v1/conversations/${conversationId}/close`,
    bearer(platformToken, {}),
  );
  assert.equal(closed.status, 200);
  const question = first.getByRole('group', { name: 'How was this conversation?' });
  await question.waitFor({ timeout: 15_000 });
  assert.ok(
    await first.locator('form:has(textarea#parley-input)').isHidden(),
    'no composer in a closed conversation',
  );
  await first.getByRole('button', { name: 'Send rating' }).click();
  await first.getByText('Choose a score from 1 to 5.').waitFor();
  await first.getByRole('radio', { name: '3 – Okay' }).focus();
  await first.keyboard.press('ArrowRight');
  assert.equal(await first.getByRole('radio', { name: '4 – Good' }).isChecked(), true);
  await first.getByRole('textbox', { name: 'Anything to add? (optional)' }).fill('Quick and friendly');
  await shot(first, 'identity-6-csat');
  await first.getByRole('button', { name: 'Send rating' }).click();
  await first.getByText('Thank you for your rating!').waitFor();
  const csat = await server.ctx.webchat.feedback.csatOf([conversationId]);
  assert.deepEqual(csat.get(conversationId), { score: 4, comment: 'Quick and friendly' });
  await shot(first, 'identity-7-csat-thanks');
});
