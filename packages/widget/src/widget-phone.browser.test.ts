import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startChromium, type TestBrowser } from '@parley/testing/browser';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { sitePage, startSite, type TestSite, widgetCompany } from '@parley/testing/widget/site';
import type { Page } from 'playwright-core';
import { expectNoAxeViolations } from './testing/axe.ts';

/**
 * The widget on a 390 px phone in headless Chromium: full screen when open (the launcher gives way to the panel's
 * close button), inside the device's safe areas (emulated notch and home indicator), and sized to the visual
 * viewport, so when that shrinks (an on-screen keyboard; here a zoom, which shrinks it the same way) the composer
 * stays in view. Screenshots in test-artifacts/widget/ (git-ignored).
 */
const artifacts = join(new URL('../../..', import.meta.url).pathname, 'test-artifacts', 'widget');
const PHONE = { width: 390, height: 844 };
let server: TestServer;
let site: TestSite;
let browser: TestBrowser;
let page: Page;

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  server = await startTestServer();
  site = await startSite();
  const shop = await widgetCompany(server, site.url, {});
  site.setPage(
    '/phone',
    sitePage(
      `<script src="${server.baseUrl}/widget.js" data-company="${shop.companyId}" data-channel="${shop.channelId}"></script>`,
    ),
  );
  browser = await startChromium({ viewport: PHONE });
  page = browser.page;
  page.on('pageerror', (err) => console.error('page error:', err.message));
});

after(async () => {
  await browser?.close();
  await site?.close();
  await server?.close();
});

/** The panel's opening animation has ended (positions are measured without its transform). */
const settled = () =>
  page.locator('.panel').evaluate((el) => Promise.all(el.getAnimations().map((a) => a.finished)));
const box = async (selector: string) => (await page.locator(selector).boundingBox())!;

test('on a 390 px phone the open chat fills the screen within the safe areas, and accessibly', async () => {
  const cdp = await page.context().newCDPSession(page);
  // An iPhone-like notch and home indicator: env(safe-area-inset-*) as the device would report them.
  await cdp.send('Emulation.setSafeAreaInsetsOverride', {
    insets: { top: 47, bottom: 34, left: 0, right: 0 },
  });
  await page.goto(`${site.url}/phone`);
  const launcher = await box('.launcher');
  assert.ok(launcher.y + launcher.height <= PHONE.height - 34, 'the launcher clears the home indicator');
  await page.locator('.launcher').click();
  await page.locator('.msg.digital_employee[data-status="complete"]').first().waitFor({ timeout: 20_000 });
  await settled();
  assert.deepEqual(await box('.panel'), { x: 0, y: 0, ...PHONE }, 'full screen');
  assert.ok(await page.locator('.launcher').isHidden(), 'the launcher gives way to the panel');
  const paddings = await page.evaluate(() => {
    const shadow = document.querySelector('[data-parley-widget]')!.shadowRoot!;
    return {
      header: getComputedStyle(shadow.querySelector('header')!).paddingTop,
      composer: getComputedStyle(shadow.querySelector('form.composer')!).paddingBottom,
    };
  });
  assert.deepEqual(
    paddings,
    { header: '47px', composer: '34px' },
    'content stays out of the notch and indicator',
  );
  await expectNoAxeViolations(page, 'phone, 390 px');
  await page.screenshot({ path: join(artifacts, 'phone-390.png') });

  await page.getByRole('button', { name: 'Close chat' }).click();
  await page.locator('.panel').waitFor({ state: 'hidden' });
  assert.ok(await page.locator('.launcher').isVisible(), 'closing brings the launcher back');
  await cdp.detach();
});

test('when the visual viewport shrinks, the panel follows it and the composer stays in view', async () => {
  await page.locator('.launcher').click();
  await page.locator('textarea').focus();
  await settled();
  const cdp = await page.context().newCDPSession(page);
  // Zooming to twice the size halves the visual viewport, as an on-screen keyboard shrinks it (iOS keeps the layout
  // viewport: a fixed panel sized to it would end under the keyboard).
  await cdp.send('Emulation.setPageScaleFactor', { pageScaleFactor: 2 });
  await page.waitForFunction(() => (window.visualViewport?.height ?? 0) < 500);
  const visual = await page.evaluate(() => ({
    top: window.visualViewport!.offsetTop,
    height: window.visualViewport!.height,
  }));
  await page.waitForFunction(
    (height) => {
      const panel = document.querySelector('[data-parley-widget]')?.shadowRoot?.querySelector('.panel');
      return panel && Math.abs(panel.getBoundingClientRect().height - height) < 1;
    },
    visual.height,
    { timeout: 5_000 },
  );
  const composer = await page.evaluate(() => {
    const form = document.querySelector('[data-parley-widget]')!.shadowRoot!.querySelector('form.composer')!;
    const rect = form.getBoundingClientRect();
    return { top: rect.top, bottom: rect.bottom };
  });
  assert.ok(
    composer.bottom <= visual.top + visual.height + 1 && composer.top >= visual.top,
    `the composer (${composer.top}–${composer.bottom}) is inside the visual viewport (${visual.top}–${visual.top + visual.height})`,
  );
  await page.screenshot({ path: join(artifacts, 'phone-390-visual-viewport.png') });
  await cdp.send('Emulation.setPageScaleFactor', { pageScaleFactor: 1 });
  await cdp.detach();
});
