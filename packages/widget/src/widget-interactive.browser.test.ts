import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startChromium, type TestBrowser } from '@parley/testing/browser';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { bearer, fetchPlatformToken } from '@parley/testing/webchat/webchat-fixtures';
import type { Page } from 'playwright-core';

/**
 * Quick replies and cards in the widget, in headless Chromium on the server's /demo page of a company whose builtin
 * digital employee offers quick replies (docs/design.md "Interactive blocks"): a quick reply answered with the
 * keyboard and one with the mouse (each disappears, shows as the visitor's message, and the bot answers it), then an
 * agent's card with an image (from a local server) and a link button. Screenshots go to test-artifacts/widget/.
 */
const artifacts = join(new URL('../../..', import.meta.url).pathname, 'test-artifacts', 'widget');
let server: TestServer;
let images: Server;
let imageUrl: string;
let browser: TestBrowser;
let page: Page;
let companyId: string;

const PICTURE =
  '<svg xmlns="http://www.w3.org/2000/svg" width="240" height="120"><rect width="240" height="120" fill="#4263eb"/><circle cx="60" cy="60" r="36" fill="#ffd43b"/></svg>';

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  server = await startTestServer();
  images = createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(PICTURE));
  await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
  imageUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}/shoes.svg`;
  companyId = (await server.ctx.companies.create('Shoe Shop')).id;
  const employee = await server.ctx.digitalEmployees.create({
    companyId,
    name: 'Ava',
    responder: 'builtin',
    settings: {
      greeting: null,
      word_delay_ms: 5,
      answers: [
        {
          question: 'Orders',
          keywords: ['order'],
          answer: 'What about your order?',
          quick_replies: [
            { id: 'where', label: 'Where is it' },
            { id: 'cancel', label: 'Cancel it' },
          ],
        },
        {
          question: 'Where',
          keywords: ['where is it'],
          answer: 'It ships **tomorrow**.',
          quick_replies: [{ id: 'thanks', label: 'Thanks' }],
        },
        { question: 'Thanks', keywords: ['thanks'], answer: 'You are welcome!' },
      ],
    },
  });
  await server.ctx.digitalEmployees.setDefault(companyId, employee.id);
  browser = await startChromium({ viewport: { width: 1000, height: 760 } });
  page = browser.page;
  page.on('pageerror', (err) => console.error('page error:', err.message));
});

after(async () => {
  await browser?.close();
  images?.close();
  await server?.close();
});

const shot = (name: string) => page.screenshot({ path: join(artifacts, `${name}.png`) });
const messages = (role: string) => page.locator(`.msg.${role}`);
const completeReply = (n: number) =>
  messages('digital_employee')
    .nth(n - 1)
    .and(page.locator('[data-status="complete"]'));
/** The `data-choice` of the element focused inside the widget's shadow root. */
const focusedChoice = () =>
  page.evaluate(
    () =>
      (
        document.querySelector('[data-parley-widget]')?.shadowRoot?.activeElement as HTMLElement | null
      )?.getAttribute('data-choice') ?? null,
  );

test('quick replies answer with the keyboard and the mouse, disappear once answered, and the bot answers', async () => {
  await page.goto(`${server.baseUrl}/demo?company=${companyId}`);
  await page.locator('.launcher').click();
  await page.locator('textarea').fill('Question about my order');
  await page.keyboard.press('Enter');
  await completeReply(1).waitFor({ timeout: 20_000 });
  const offer = messages('digital_employee').nth(0).locator('.quick-replies');
  await offer.waitFor();
  assert.equal(await offer.getAttribute('role'), 'group');
  assert.deepEqual(await offer.locator('button').allTextContents(), ['Where is it', 'Cancel it']);
  await shot('interactive-1-quick-replies');

  // Keyboard: from the composer, Shift+Tab walks back to the last quick reply, then to the first; Enter taps it.
  await page.locator('textarea').focus();
  for (let i = 0; i < 6 && (await focusedChoice()) !== 'cancel'; i++) await page.keyboard.press('Shift+Tab');
  assert.equal(await focusedChoice(), 'cancel', 'the quick replies are in the tab order');
  await page.keyboard.press('Shift+Tab');
  assert.equal(await focusedChoice(), 'where');
  await page.keyboard.press('Enter');

  await messages('user').nth(1).waitFor();
  assert.equal(await messages('user').nth(1).locator('.body').textContent(), 'Where is it');
  await completeReply(2).waitFor({ timeout: 20_000 });
  assert.equal(
    await messages('digital_employee').nth(1).locator('.body').textContent(),
    'It ships tomorrow.',
  );
  assert.equal(await offer.count(), 0, 'answered quick replies disappear');
  assert.equal(await page.locator('.quick-replies').count(), 1, 'only the new offer shows');

  // Mouse.
  await page.locator('.quick-replies button', { hasText: 'Thanks' }).click();
  await completeReply(3).waitFor({ timeout: 20_000 });
  assert.equal(await messages('digital_employee').nth(2).locator('.body').textContent(), 'You are welcome!');
  assert.equal(await page.locator('.quick-replies').count(), 0);
  await shot('interactive-2-answered');
});

test('an agent’s card renders with its image, text, a postback button and a link that opens safely', async () => {
  const token = await fetchPlatformToken(server, companyId, ['conversations:read', 'conversations:write']);
  const list = await http(`${server.baseUrl}/platform/v1/conversations`, bearer(token));
  const conversationId = list.body.conversations[0].id;
  const posted = await http(
    `${server.baseUrl}/platform/v1/conversations/${conversationId}/messages`,
    bearer(token, {
      author: { name: 'Kim' },
      blocks: [
        { type: 'markdown', content: 'These might fit:' },
        {
          type: 'card',
          title: 'Blue runners',
          text: 'Size 42, in stock.',
          image_url: imageUrl,
          buttons: [
            { id: 'buy', label: 'Buy now' },
            { id: 'details', label: 'Details', url: 'https://shop.example/runners' },
          ],
        },
      ],
    }),
  );
  assert.equal(posted.status, 201, posted.text);
  const card = messages('agent').last().locator('.card');
  await card.waitFor({ timeout: 15_000 });
  assert.equal(await card.locator('.card-title').textContent(), 'Blue runners');
  assert.equal(await card.locator('.card-text').textContent(), 'Size 42, in stock.');
  await page.waitForFunction(() => {
    const img = document
      .querySelector('[data-parley-widget]')
      ?.shadowRoot?.querySelector('.card img') as HTMLImageElement | null;
    return !!img && img.complete && img.naturalWidth > 0;
  });
  const link = card.locator('a.card-link');
  assert.equal(await link.textContent(), 'Details');
  assert.equal(await link.getAttribute('href'), 'https://shop.example/runners');
  assert.equal(await link.getAttribute('target'), '_blank');
  assert.equal(await link.getAttribute('rel'), 'noopener noreferrer');
  await card.scrollIntoViewIfNeeded();
  await shot('interactive-3-card');

  await card.locator('button', { hasText: 'Buy now' }).click();
  await messages('user').last().and(page.locator('[data-status="complete"]')).waitFor({ timeout: 15_000 });
  assert.equal(await messages('user').last().locator('.body').textContent(), 'Buy now');
  assert.ok(
    await card.locator('button', { hasText: 'Buy now' }).isDisabled(),
    'an answered card takes no more taps',
  );
  const read = await http(
    `${server.baseUrl}/platform/v1/conversations/${conversationId}/messages`,
    bearer(token),
  );
  const last = read.body.messages.at(-1);
  assert.deepEqual(
    {
      role: last.role,
      type: last.blocks[0].type,
      option_id: last.blocks[0].option_id,
      label: last.blocks[0].label,
    },
    { role: 'user', type: 'postback', option_id: 'buy', label: 'Buy now' },
  );
});
