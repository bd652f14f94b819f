import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startChromium, type TestBrowser } from '@parley/testing/browser';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { pngOf } from '@parley/testing/webchat/attachment-fixtures';
import {
  realtimeOrigin,
  sitePage,
  startSite,
  strictPolicy,
  type TestSite,
  widgetCompany,
} from '@parley/testing/widget/site';
import type { Page } from 'playwright-core';

/**
 * The widget on an integrator's page served with the strict Content-Security-Policy of the contract (docs: widget
 * README "Content-Security-Policy") — no inline styles or scripts, no eval: it renders, chats and uploads, and the
 * browser reports no violation, neither as `securitypolicyviolation` events nor as reports to the site. Browsers
 * without constructable stylesheets (the API removed before the page loads) get the stylesheet from Parley, or a
 * `<style nonce>` with `data-nonce`. Screenshots in test-artifacts/widget/ (git-ignored).
 */
const artifacts = join(new URL('../../..', import.meta.url).pathname, 'test-artifacts', 'widget');
let server: TestServer;
let site: TestSite;
let realtime: string;
let companyId: string;
let channelId: string;
const browsers: TestBrowser[] = [];

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  server = await startTestServer();
  site = await startSite();
  realtime = await realtimeOrigin(server);
  ({ companyId, channelId } = await widgetCompany(server, site.url, {
    answers: [{ question: 'Photo', keywords: ['photo'], answer: 'Thanks, I can see the **photo**.' }],
  }));
});

after(async () => {
  await Promise.all(browsers.map((b) => b.close()));
  await site?.close();
  await server?.close();
});

/** A fresh browser on `path`, with every `securitypolicyviolation` of the page (and its shadow trees) recorded. */
async function openPage(path: string, options: { withoutConstructableSheets?: boolean } = {}): Promise<Page> {
  const browser = await startChromium({ viewport: { width: 1000, height: 760 } });
  browsers.push(browser);
  const { page } = browser;
  page.on('pageerror', (err) => console.error('page error:', err.message));
  // Init scripts run before the page's own, whatever its CSP (they are not part of the page).
  await page.addInitScript((old) => {
    const seen: unknown[] = [];
    (window as unknown as { __violations: unknown[] }).__violations = seen;
    document.addEventListener(
      'securitypolicyviolation',
      (e) => seen.push({ directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample }),
      true,
    );
    if (old) {
      // A browser without constructable stylesheets (Safari before 16.4).
      delete (Document.prototype as { adoptedStyleSheets?: unknown }).adoptedStyleSheets;
      delete (ShadowRoot.prototype as { adoptedStyleSheets?: unknown }).adoptedStyleSheets;
    }
  }, options.withoutConstructableSheets ?? false);
  await page.goto(`${site.url}${path}`);
  return page;
}

type Violation = { directive: string; blocked: string; sample: string };
const violations = (page: Page) =>
  page.evaluate(() => (window as unknown as { __violations: Violation[] }).__violations);

/**
 * The page's CSP violations and the site's reports, complete up to now. Both are delivered asynchronously, so absence
 * alone proves nothing; a probe settles it: an image from the site's own origin, which the policies' img-src (Parley
 * and data: only) blocks. A browser reports violations in the order they happen, the event and then the report of
 * each from one queued task (CSP Level 3, "Report a violation"), so once the probe's event and report have arrived,
 * those of any violation the page caused before were dispatched ahead of them (the reports go one by one to the same
 * site, which answers each at once) — and the probe shows that events and reports are seen at all. Returns both
 * without the probe's.
 */
async function violationsUpToNow(page: Page, reportsFrom: number) {
  const probe = `csp-probe-${crypto.randomUUID()}`;
  await page.evaluate((src) => {
    const img = document.createElement('img');
    img.src = src;
    document.body.append(img);
  }, `${site.url}/${probe}.png`);
  await page.waitForFunction(
    (id) =>
      (window as unknown as { __violations: Violation[] }).__violations.some((v) => v.blocked.includes(id)),
    probe,
    { timeout: 10_000 },
  );
  await waitFor("the probe's violation report", () =>
    site.reports.slice(reportsFrom).some((r) => String(r['blocked-uri']).includes(probe)),
  );
  return {
    events: (await violations(page)).filter((v) => !v.blocked.includes(probe)),
    reports: site.reports.slice(reportsFrom).filter((r) => !String(r['blocked-uri']).includes(probe)),
  };
}

const embed = (extra = '') =>
  `<script src="${server.baseUrl}/widget.js" data-company="${companyId}" data-channel="${channelId}"${extra}></script>`;

/** The launcher is styled (its accent background came from the widget's stylesheet, not the UA's grey button). */
async function launcherBackground(page: Page): Promise<string> {
  await page.locator('.launcher').waitFor();
  return page.locator('.launcher').evaluate((el) => getComputedStyle(el).backgroundColor);
}

test('under the strict policy the widget renders, chats and uploads with no CSP violation', async () => {
  site.setPage('/strict', sitePage(embed()), {
    'content-security-policy': strictPolicy(server.baseUrl, realtime),
  });
  const reportsBefore = site.reports.length;
  const page = await openPage('/strict');
  assert.equal(await launcherBackground(page), 'rgb(59, 91, 219)', 'the launcher is styled');
  await page.locator('.launcher').click();
  await page.locator('.panel').waitFor({ state: 'visible' });
  assert.equal(
    await page.locator('.panel').evaluate((el) => getComputedStyle(el).flexDirection),
    'column',
    'the panel is styled',
  );
  const replies = page.locator('.msg.digital_employee[data-status="complete"]');
  await replies.first().waitFor({ timeout: 20_000 });

  await page.locator('textarea').fill('Hello from a strict page');
  await page.keyboard.press('Enter');
  await replies.nth(1).waitFor({ timeout: 20_000 });

  // Upload through the paperclip's file input, send it, and see its thumbnail load from Parley (img-src).
  await page.locator('input[type="file"]').setInputFiles({
    name: 'photo.png',
    mimeType: 'image/png',
    buffer: pngOf(40, 30),
  });
  await page.locator('.tray .chip').filter({ hasText: 'photo.png' }).waitFor({ timeout: 20_000 });
  await page.locator('textarea').fill('Here is a photo');
  await page.keyboard.press('Enter');
  const thumbnail = page.locator('.msg.user[data-status="complete"] img.thumbnail');
  await thumbnail.waitFor({ timeout: 20_000 });
  await page.waitForFunction(
    () => {
      const img = document
        .querySelector('[data-parley-widget]')
        ?.shadowRoot?.querySelector<HTMLImageElement>('.msg.user img.thumbnail');
      return img?.complete && img.naturalWidth === 40;
    },
    undefined,
    { timeout: 20_000 },
  );
  await replies.nth(2).waitFor({ timeout: 20_000 });
  assert.match((await replies.nth(2).textContent()) ?? '', /I can see the photo/);
  await page.screenshot({ path: join(artifacts, 'csp-strict.png') });

  const { events, reports } = await violationsUpToNow(page, reportsBefore);
  assert.deepEqual(events, [], 'no securitypolicyviolation event');
  assert.deepEqual(reports, [], 'no report sent to the site');
});

test('without constructable stylesheets: the stylesheet from Parley (style-src names it), or a nonce', async () => {
  site.setPage('/old-browser', sitePage(embed()), {
    'content-security-policy': strictPolicy(server.baseUrl, realtime, server.baseUrl),
  });
  site.setPage('/old-browser-nonce', sitePage(embed(' data-nonce="r4nd0m"')), {
    'content-security-policy': strictPolicy(server.baseUrl, realtime, "'nonce-r4nd0m'"),
  });
  for (const path of ['/old-browser', '/old-browser-nonce']) {
    const reportsBefore = site.reports.length;
    const page = await openPage(path, { withoutConstructableSheets: true });
    assert.equal(
      await page.evaluate(() => 'adoptedStyleSheets' in Document.prototype),
      false,
      'the API is gone',
    );
    await page.waitForFunction(
      () => {
        const launcher = document
          .querySelector('[data-parley-widget]')
          ?.shadowRoot?.querySelector('.launcher');
        return launcher && getComputedStyle(launcher).backgroundColor === 'rgb(59, 91, 219)';
      },
      undefined,
      { timeout: 10_000 },
    );
    const kind = await page.evaluate(() => {
      const shadow = document.querySelector('[data-parley-widget]')?.shadowRoot;
      return shadow?.querySelector('link[rel="stylesheet"]')
        ? 'link'
        : shadow?.querySelector('style')
          ? 'style'
          : '';
    });
    assert.equal(kind, path.endsWith('nonce') ? 'style' : 'link', path);
    await page.locator('.launcher').click();
    await page.locator('.msg.digital_employee[data-status="complete"]').first().waitFor({ timeout: 20_000 });
    assert.equal(
      await page.locator('.panel').evaluate((el) => getComputedStyle(el).flexDirection),
      'column',
      `${path}: the chat's rules apply too`,
    );
    const { events, reports } = await violationsUpToNow(page, reportsBefore);
    assert.deepEqual(events, [], `${path}: no securitypolicyviolation event`);
    assert.deepEqual(reports, [], `${path}: no report sent to the site`);
  }
});
