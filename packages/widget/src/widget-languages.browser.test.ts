import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startChromium, type TestBrowser } from '@parley/testing/browser';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { bearer, fetchPlatformToken } from '@parley/testing/webchat/webchat-fixtures';
import { sitePage, startSite, type TestSite, widgetCompany } from '@parley/testing/widget/site';
import type { Page } from 'playwright-core';
import { expectNoAxeViolations } from './testing/axe.ts';

/**
 * The widget's languages in headless Chromium: `data-lang` (BCP 47) picks one, else the page's `<html lang>`, else the
 * browser's; Arabic and Hebrew lay it out right to left (`dir` follows the language); the server's system notices
 * read in the visitor's language; a site overrides any text with `data-strings` or `Parley.init({ strings })`.
 * Screenshots in test-artifacts/widget/ (git-ignored).
 */
const artifacts = join(new URL('../../..', import.meta.url).pathname, 'test-artifacts', 'widget');
let server: TestServer;
let site: TestSite;
let shop: { companyId: string; channelId: string };
const browsers: TestBrowser[] = [];

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  server = await startTestServer();
  site = await startSite();
  shop = await widgetCompany(server, site.url, {
    answers: [{ question: 'Hours', keywords: ['hours', 'ساعات', 'שעות'], answer: 'We are open 9–17.' }],
  });
});

after(async () => {
  await Promise.all(browsers.map((b) => b.close()));
  await site?.close();
  await server?.close();
});

async function open(path: string, html: string, locale?: string): Promise<Page> {
  site.setPage(path, html);
  const browser = await startChromium({
    viewport: { width: 1000, height: 760 },
    ...(locale ? { locale } : {}),
  });
  browsers.push(browser);
  browser.page.on('pageerror', (err) => console.error('page error:', err.message));
  await browser.page.goto(`${site.url}${path}`);
  await browser.page.locator('.launcher').waitFor();
  return browser.page;
}

const embed = (extra = '') =>
  `<script src="${server.baseUrl}/widget.js" data-company="${shop.companyId}" data-channel="${shop.channelId}"${extra}></script>`;
const root = (page: Page) =>
  page.evaluate(() => {
    const el = document.querySelector('[data-parley-widget]')?.shadowRoot?.querySelector('.root');
    return { lang: el?.getAttribute('lang'), dir: el?.getAttribute('dir') };
  });

test('data-lang="ar": Arabic, right to left, mirrored, and accessible', async () => {
  const page = await open('/ar', sitePage(embed(' data-lang="ar"'), 'ar'));
  assert.deepEqual(await root(page), { lang: 'ar', dir: 'rtl' });
  assert.equal(await page.locator('.launcher').getAttribute('aria-label'), 'فتح المحادثة');
  const launcher = await page.locator('.launcher').boundingBox();
  assert.ok(launcher && launcher.x < 100, `the launcher sits bottom left (x=${launcher?.x})`);
  await page.locator('.launcher').click();
  await page.locator('.msg.digital_employee[data-status="complete"]').first().waitFor({ timeout: 20_000 });
  assert.equal(await page.locator('textarea').getAttribute('placeholder'), 'اكتب رسالة…');
  assert.equal(await page.locator('.send').textContent(), 'إرسال');
  await page.locator('textarea').fill('ما هي ساعات العمل؟');
  await page.keyboard.press('Enter');
  await page.locator('.msg.digital_employee[data-status="complete"]').nth(1).waitFor({ timeout: 20_000 });
  const panel = (await page.locator('.panel').boundingBox())!;
  const mine = (await page.locator('.msg.user').first().boundingBox())!;
  const theirs = (await page.locator('.msg.digital_employee').first().boundingBox())!;
  assert.ok(panel.x < 100, 'the panel opens on the left');
  assert.ok(mine.x < theirs.x, 'the visitor’s messages start on the left, the replies on the right');
  await expectNoAxeViolations(page, 'Arabic, RTL');
  await page.screenshot({ path: join(artifacts, 'rtl-ar.png') });
});

test('the page’s <html lang="he"> picks Hebrew (right to left); a German browser gets German', async () => {
  const hebrew = await open('/he', sitePage(embed(), 'he'));
  assert.deepEqual(await root(hebrew), { lang: 'he', dir: 'rtl' });
  await hebrew.locator('.launcher').click();
  await hebrew.locator('.msg.digital_employee[data-status="complete"]').first().waitFor({ timeout: 20_000 });
  assert.equal(await hebrew.locator('textarea').getAttribute('placeholder'), 'כתבו הודעה…');
  assert.equal(await hebrew.getByRole('button', { name: 'שיחה עם נציג' }).count(), 1);
  await expectNoAxeViolations(hebrew, 'Hebrew, RTL');
  await hebrew.screenshot({ path: join(artifacts, 'rtl-he.png') });

  const german = await open('/no-lang', sitePage(embed(), null), 'de-DE');
  assert.deepEqual(await root(german), { lang: 'de-DE', dir: 'ltr' });
  assert.equal(await german.locator('.launcher').getAttribute('aria-label'), 'Chat öffnen');
  // data-lang wins over the page and the browser.
  const french = await open('/fr', sitePage(embed(' data-lang="fr-CA"'), 'de'), 'de-DE');
  assert.deepEqual(await root(french), { lang: 'fr-CA', dir: 'ltr' });
  assert.equal(await french.locator('.launcher').getAttribute('aria-label'), 'Ouvrir le chat');
});

test('system notices read in the visitor’s language, and the hand-off shows once', async () => {
  const page = await open('/de', sitePage(embed(' data-lang="de"'), 'de'));
  await page.locator('.launcher').click();
  await page.locator('.msg.digital_employee[data-status="complete"]').first().waitFor({ timeout: 20_000 });
  await page.getByRole('button', { name: 'Mit einem Menschen sprechen' }).click();
  const notices = page.locator('.msg.system');
  await notices.first().waitFor({ timeout: 20_000 });
  assert.equal(
    await notices.first().locator('.body').textContent(),
    'Sie möchten mit einem Menschen sprechen: Gleich meldet sich jemand aus unserem Team.',
  );
  // The notice comes over the realtime channel; the hand-off row goes once the conversation is read again (the
  // request's own answer, or the re-read the notice starts: packages/webchat-sdk/src/conversation-state.ts), a
  // round trip later: waited for, not read at once.
  await page.locator('.handoff').waitFor({ state: 'hidden', timeout: 20_000 });
  assert.ok(await page.locator('.handoff').isHidden(), 'no second note beside the notice');
  const conversationId = await page.evaluate(
    (key) => localStorage.getItem(key),
    `parley:${shop.companyId}:conversation:${shop.channelId}`,
  );
  const token = await fetchPlatformToken(server, shop.companyId, ['conversations:write']);
  const posted = await http(
    `${server.baseUrl}/platform/v1/conversations/${conversationId}/messages`,
    bearer(token, {
      author: { name: 'Kim' },
      blocks: [{ type: 'markdown', content: 'Hallo, hier ist Kim.' }],
    }),
  );
  assert.equal(posted.status, 201);
  await page.locator('.msg.agent').waitFor({ timeout: 20_000 });
  await page
    .locator('.msg.system .body', { hasText: 'Kim ist dem Gespräch beigetreten.' })
    .waitFor({ timeout: 20_000 });
  assert.deepEqual(
    await notices.locator('.body').allTextContents(),
    ['Kim ist dem Gespräch beigetreten.'],
    'one hand-off notice, updated in place: the request became the join',
  );
  await page.screenshot({ path: join(artifacts, 'handoff-de.png') });
});

test('a site overrides any text: data-strings and data-title on the tag, strings in Parley.init', async () => {
  const tag = await open(
    '/strings',
    sitePage(embed(` data-title="Shoe help" data-strings='{"send":"Go!","openChat":"Need help?"}'`)),
  );
  assert.equal(await tag.locator('.launcher').getAttribute('aria-label'), 'Need help?');
  await tag.locator('.launcher').click();
  await tag.locator('.panel').waitFor({ state: 'visible', timeout: 20_000 });
  assert.equal(await tag.locator('.send').textContent(), 'Go!');
  assert.equal(await tag.locator('#parley-title').textContent(), 'Shoe help');

  const init = await open('/init', sitePage(embed(' data-lang="es"')));
  // Parley.init from the page's console stands in for the site's own script (this page has no inline script).
  await init.evaluate(() =>
    (window as unknown as { Parley: { init(o: unknown): void } }).Parley.init({
      strings: { inputPlaceholder: '¿En qué te ayudamos?' },
      open: true,
    }),
  );
  await init.locator('.panel').waitFor({ state: 'visible', timeout: 20_000 });
  assert.equal(await init.locator('textarea').getAttribute('placeholder'), '¿En qué te ayudamos?');
  assert.equal(await init.locator('.send').textContent(), 'Enviar', 'the rest stays Spanish');
});
