import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startChromium, type TestBrowser } from '@parley/testing/browser';
import { createCompanyWithConnector } from '@parley/testing/digital-employees/responder-fixtures';
import { TestBot } from '@parley/testing/digital-employees/test-bots';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { pngOf } from '@parley/testing/webchat/attachment-fixtures';
import { bearer, fetchPlatformToken } from '@parley/testing/webchat/webchat-fixtures';
import { sitePage, startSite, type TestSite, widgetCompany } from '@parley/testing/widget/site';
import type { Page } from 'playwright-core';
import { expectNoAxeViolations } from './testing/axe.ts';

/**
 * WCAG 2.1 AA in headless Chromium: axe-core finds no violation in any state of the widget (closed, open and empty,
 * chatting, streaming, quick replies and a card, attachments, offline and a failed send, the satisfaction
 * question), in the default and a light themed colour; keyboard-only use with the focus kept inside the open panel
 * and given back on close; the live region says each completed message once, never a streaming one; no motion for
 * visitors who ask for less. (Right to left and phones: widget-languages and widget-phone tests.) Screenshots in
 * test-artifacts/widget/ (git-ignored).
 */
const artifacts = join(new URL('../../..', import.meta.url).pathname, 'test-artifacts', 'widget');
let server: TestServer;
let site: TestSite;
let images: Server;
let imageUrl: string;
const browsers: TestBrowser[] = [];
let platformToken: string;
let shop: { companyId: string; channelId: string };
let held: { companyId: string; channelId: string };
let bot: TestBot | undefined;
let releaseHeldReply: () => void;

const SLOW_REPLY =
  'Our summer sale runs until the end of August: every pair of running shoes is twenty percent off, socks come ' +
  'in packs of three, and orders over fifty euros ship for free within two working days across the country.';

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  server = await startTestServer();
  site = await startSite();
  images = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'image/png' }).end(pngOf(240, 120, [66, 99, 235])),
  );
  await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
  imageUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}/shoes.png`;
  shop = await widgetCompany(server, site.url, {
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
      { question: 'Sale', keywords: ['sale'], answer: SLOW_REPLY },
    ],
    // Slow enough to watch the live region while a reply streams (about 40 words: 5 s).
    wordDelayMs: 120,
  });
  held = await heldReplyCompany();
  platformToken = await fetchPlatformToken(server, shop.companyId, [
    'conversations:read',
    'conversations:write',
  ]);
});

/**
 * A company whose digital employee is a webhook bot (a real HTTP server here) that streams the first words of
 * SLOW_REPLY and then holds the reply open until `releaseHeldReply`.
 */
async function heldReplyCompany(): Promise<{ companyId: string; channelId: string }> {
  bot = await TestBot.start();
  const released = new Promise<void>((resolve) => {
    releaseHeldReply = resolve;
  });
  bot.handler = async (_req, res) => {
    const [first, rest] = [SLOW_REPLY.slice(0, 22), SLOW_REPLY.slice(22)];
    res
      .writeHead(200, { 'content-type': 'application/x-ndjson' })
      .write(`${JSON.stringify({ delta: first })}\n`);
    await released;
    res.end(`${JSON.stringify({ delta: rest })}\n`);
  };
  const { companyId, employee } = await createCompanyWithConnector(server, 'webhook', bot.url, 'whk_held', {
    settings: { timeout_ms: 300_000 },
  });
  await server.ctx.digitalEmployees.setDefault(companyId, employee.id);
  const channel = await server.ctx.webchat.channels.create({
    companyId,
    name: 'Held',
    digitalEmployeeId: employee.id,
    allowedOrigins: [site.url],
  });
  return { companyId, channelId: channel.id };
}

after(async () => {
  releaseHeldReply?.();
  await Promise.all(browsers.map((b) => b.close()));
  await bot?.close();
  images?.close();
  await site?.close();
  await server?.close();
});

async function open(path: string, html: string, viewport = { width: 1000, height: 760 }): Promise<Page> {
  site.setPage(path, html);
  const browser = await startChromium({ viewport });
  browsers.push(browser);
  browser.page.on('pageerror', (err) => console.error('page error:', err.message));
  await browser.page.goto(`${site.url}${path}`);
  await browser.page.locator('.launcher').waitFor();
  return browser.page;
}

const embed = (company: { companyId: string; channelId: string }, extra = '') =>
  `<script src="${server.baseUrl}/widget.js" data-company="${company.companyId}" data-channel="${company.channelId}"${extra}></script>`;
const shot = (page: Page, name: string) => page.screenshot({ path: join(artifacts, `${name}.png`) });
const shadowEval = <T>(page: Page, fn: (shadow: ShadowRoot) => T) =>
  page.evaluate(
    `(${fn.toString()})(document.querySelector('[data-parley-widget]').shadowRoot)`,
  ) as Promise<T>;
const conversationIdOf = (page: Page, company: { companyId: string; channelId: string }) =>
  page.evaluate(
    (key) => localStorage.getItem(key),
    `parley:${company.companyId}:conversation:${company.channelId}`,
  );

test('axe finds no WCAG 2.1 AA violation in any state of the widget', async () => {
  // Open and empty: a company whose digital employee does not greet.
  const quiet = await widgetCompany(server, site.url, { greeting: null });
  const empty = await open('/quiet', sitePage(embed(quiet)));
  await expectNoAxeViolations(empty, 'closed');
  await empty.locator('.launcher').click();
  await empty.locator('.panel[data-connection="connected"]').waitFor({ timeout: 20_000 });
  await expectNoAxeViolations(empty, 'open, empty');
  await shot(empty, 'a11y-1-open-empty');

  const page = await open('/shop', sitePage(embed(shop)));
  await page.locator('.launcher').click();
  const replies = page.locator('.msg.digital_employee[data-status="complete"]');
  await replies.first().waitFor({ timeout: 20_000 });
  await page.locator('textarea').fill('I have a question about my order');
  await page.keyboard.press('Enter');
  await page.locator('.quick-replies').waitFor({ timeout: 20_000 });
  await expectNoAxeViolations(page, 'chatting, quick replies offered');
  await shot(page, 'a11y-2-quick-replies');

  // Streaming: audited while a reply is partial. The company's bot holds its reply open after the first words until
  // the audit is done, however long a loaded machine makes the audit take.
  const holding = await open('/held', sitePage(embed(held)));
  await holding.locator('.launcher').click();
  await holding.locator('.panel[data-connection="connected"]').waitFor({ timeout: 20_000 });
  await holding.locator('textarea').fill('Tell me about the sale');
  await holding.keyboard.press('Enter');
  const streaming = holding.locator('.msg.digital_employee[data-status="partial"]');
  await streaming.waitFor({ timeout: 20_000 });
  await expectNoAxeViolations(holding, 'streaming');
  assert.equal(await streaming.count(), 1, 'still streaming after the audit');
  await shot(holding, 'a11y-4-streaming');
  releaseHeldReply();
  await holding
    .locator('.msg.digital_employee[data-status="complete"]')
    .filter({ hasText: 'twenty percent off' })
    .waitFor({ timeout: 30_000 });

  // An agent's card, with an image and a link button.
  const conversationId = await conversationIdOf(page, shop);
  const card = await http(
    `${server.baseUrl}/platform/v1/conversations/${conversationId}/messages`,
    bearer(platformToken, {
      author: { name: 'Kim' },
      blocks: [
        { type: 'markdown', content: 'These are back in stock:' },
        {
          type: 'card',
          title: 'Blue runners',
          text: 'Size 42, in stock.',
          image_url: imageUrl,
          buttons: [
            { id: 'buy', label: 'Buy now' },
            { id: 'more', label: 'See details', url: 'https://shop.example/runners' },
          ],
        },
      ],
    }),
  );
  assert.equal(card.status, 201);
  await page.locator('.msg.agent .card').waitFor({ timeout: 20_000 });
  await expectNoAxeViolations(page, 'card');
  await shot(page, 'a11y-3-card');

  // An attachment in the tray, then in a sent message.
  await page
    .locator('input[type="file"]')
    .setInputFiles({ name: 'receipt.png', mimeType: 'image/png', buffer: pngOf(60, 40) });
  await page.locator('.tray .chip').waitFor({ timeout: 20_000 });
  await expectNoAxeViolations(page, 'attachment in the composer');
  await page.locator('textarea').fill('My receipt');
  await page.keyboard.press('Enter');
  await page.locator('.msg.user[data-status="complete"] img.thumbnail').waitFor({ timeout: 20_000 });
  await expectNoAxeViolations(page, 'attachment sent');

  // A send the server refuses (too long): "Not sent" with Retry.
  await page.locator('textarea').fill('x'.repeat(server.config.webchat.maxMessageBytes + 1));
  await page.keyboard.press('Enter');
  await page.locator('.msg.user.failed').waitFor({ timeout: 20_000 });
  await expectNoAxeViolations(page, 'failed send');
  await shot(page, 'a11y-5-failed');

  // Offline: the status line, and a message waiting.
  await page.context().setOffline(true);
  await page.locator('.panel:not([data-connection="connected"])').waitFor({ timeout: 20_000 });
  await page.locator('textarea').fill('Are you there?');
  await page.keyboard.press('Enter');
  await page.locator('.msg.user[data-status="pending"]').waitFor();
  await expectNoAxeViolations(page, 'offline');
  await shot(page, 'a11y-6-offline');
  await page.context().setOffline(false);
  await page.locator('.panel[data-connection="connected"]').waitFor({ timeout: 30_000 });

  // Closed by an agent: the satisfaction question.
  const closed = await http(
    `${server.baseUrl}/platform/v1/conversations/${conversationId}/close`,
    bearer(platformToken, {}),
  );
  assert.equal(closed.status, 200);
  await page.getByRole('group', { name: 'How was this conversation?' }).waitFor({ timeout: 20_000 });
  await expectNoAxeViolations(page, 'CSAT');
  await shot(page, 'a11y-7-csat');
});

test('a light theme colour gets dark text and a darker accent where it is text; axe finds no contrast issue', async () => {
  const page = await open(
    '/yellow',
    sitePage(embed(await widgetCompany(server, site.url, {}), ' data-color="#ffd43b"')),
  );
  assert.equal(await page.locator('.launcher').evaluate((el) => getComputedStyle(el).color), 'rgb(0, 0, 0)');
  await page.locator('.launcher').click();
  await page.locator('.msg.digital_employee[data-status="complete"]').first().waitFor({ timeout: 20_000 });
  const handoff = await page.locator('.handoff-button').evaluate((el) => getComputedStyle(el).color);
  assert.notEqual(handoff, 'rgb(255, 212, 59)', 'yellow text on white would be unreadable: darkened');
  await expectNoAxeViolations(page, 'themed #ffd43b');
  await shot(page, 'a11y-8-theme-yellow');
});

test('keyboard only: open, write, send, move through the panel without leaving it, close back to the launcher', async () => {
  const page = await open('/keyboard', sitePage(embed(await widgetCompany(server, site.url, {}))));
  const focused = () =>
    shadowEval(page, (shadow) => {
      const el = shadow.activeElement as HTMLElement | null;
      return el ? el.id || el.className || el.tagName : null;
    });
  for (let i = 0; i < 5 && (await focused()) !== 'launcher'; i++) await page.keyboard.press('Tab');
  assert.equal(await focused(), 'launcher');
  await page.keyboard.press('Enter');
  await page.locator('.panel').waitFor({ state: 'visible', timeout: 20_000 });
  await page.waitForFunction(
    () => document.querySelector('[data-parley-widget]')?.shadowRoot?.activeElement?.id === 'parley-input',
  );
  await page.locator('.msg.digital_employee[data-status="complete"]').first().waitFor({ timeout: 20_000 });
  await page.keyboard.type('Hello, typed only');
  await page.keyboard.press('Enter');
  await page.locator('.msg.user[data-status="complete"]').waitFor({ timeout: 20_000 });

  // Forty Tabs and forty Shift+Tabs never leave the panel, and come round again.
  const inPanel = () => shadowEval(page, (shadow) => Boolean(shadow.activeElement?.closest('.panel')));
  const seen = new Set<string>();
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press('Tab');
    assert.ok(await inPanel(), `Tab ${i + 1} stayed in the panel`);
    seen.add(String(await focused()));
  }
  assert.ok(seen.has('parley-input'), 'the composer comes round again');
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press('Shift+Tab');
    assert.ok(await inPanel(), `Shift+Tab ${i + 1} stayed in the panel`);
  }
  await page.keyboard.press('Escape');
  await page.locator('.panel').waitFor({ state: 'hidden' });
  assert.equal(await focused(), 'launcher', 'the focus is back on the launcher');
});

test('the live region says each completed message once, and nothing while a reply streams', async () => {
  const page = await open('/live', sitePage(embed(shop)));
  await page.locator('.launcher').click();
  await page.locator('.msg.digital_employee[data-status="complete"]').first().waitFor({ timeout: 20_000 });
  // The live region's changes, and each text the reply shows, recorded in the page as they happen (polled from
  // here, a loaded machine's round trips could step over a stream's steps).
  await shadowEval(page, (shadow) => {
    const live = shadow.querySelector('[aria-live="polite"]')!;
    const heard: Array<{ text: string; streaming: number }> = [];
    const shown: string[] = [];
    (window as unknown as { __heard: typeof heard; __shown: string[] }).__heard = heard;
    (window as unknown as { __heard: typeof heard; __shown: string[] }).__shown = shown;
    new MutationObserver(() =>
      heard.push({
        text: live.textContent ?? '',
        streaming: shadow.querySelectorAll('.msg[data-status="partial"]').length,
      }),
    ).observe(live, { childList: true, characterData: true, subtree: true });
    new MutationObserver(() => {
      const text = shadow.querySelectorAll('.msg.digital_employee')[1]?.querySelector('.body')?.textContent;
      if (typeof text === 'string' && shown.at(-1) !== text) shown.push(text);
    }).observe(shadow.querySelector('.log')!, { childList: true, characterData: true, subtree: true });
  });
  await page.locator('textarea').fill('Tell me about the sale');
  await page.keyboard.press('Enter');
  const reply = page.locator('.msg.digital_employee').nth(1);
  await reply.and(page.locator('[data-status="complete"]')).waitFor({ timeout: 30_000 });
  await page.waitForFunction(
    () => ((window as unknown as { __heard: unknown[] }).__heard ?? []).length > 0,
    undefined,
    { timeout: 10_000 },
  );
  const { heard, shown } = await page.evaluate(() => {
    const recorded = window as unknown as {
      __heard: Array<{ text: string; streaming: number }>;
      __shown: string[];
    };
    return { heard: recorded.__heard, shown: recorded.__shown };
  });
  // Count how often the reply's text changed on screen while the live region was watched.
  assert.ok(shown.length >= 3, `the reply streamed in steps (${shown.length} texts seen)`);
  assert.equal(heard.length, 1, `announced once: ${JSON.stringify(heard)}`);
  assert.equal(heard[0]!.streaming, 0, 'after the stream completed');
  assert.equal(heard[0]!.text, `New message from Ava: ${SLOW_REPLY}`);
});

test('reduced motion: no animation for visitors who ask for less', async () => {
  const page = await open('/motion', sitePage(embed(await widgetCompany(server, site.url, {}))));
  await page.locator('.launcher').click();
  await page.locator('.panel').waitFor({ state: 'visible', timeout: 20_000 });
  const animation = () => page.locator('.panel').evaluate((el) => getComputedStyle(el).animationName);
  assert.equal(await animation(), 'parley-open');
  await page.emulateMedia({ reducedMotion: 'reduce' });
  assert.equal(await animation(), 'none');
  assert.equal(
    await page.locator('.launcher').evaluate((el) => getComputedStyle(el).transitionDuration),
    '0s',
  );
});

test('the audit sees inside the widget: a control without a name in its shadow root is a violation', async () => {
  const page = await open('/sanity', sitePage(embed(await widgetCompany(server, site.url, {}))));
  await shadowEval(page, (shadow) => {
    shadow.querySelector('.root')!.append(document.createElement('button'));
  });
  await assert.rejects(expectNoAxeViolations(page, 'a nameless button'), /button-name/);
});
