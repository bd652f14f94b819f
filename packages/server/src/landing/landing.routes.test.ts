import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startChromium, type TestBrowser } from '@parley/testing/browser';
import { startTestServer, type TestServer } from '@parley/testing/test-server';

const ARTIFACTS = fileURLToPath(new URL('../../../../test-artifacts/landing/', import.meta.url));

describe('the landing page at / and the icon', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('GET / answers 200 with a page that has no script and links the demo, the portal and the API docs', async () => {
    const res = await fetch(`${server.baseUrl}/`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.doesNotMatch(csp, /script-src/, 'no script source at all is allowed');
    const html = await res.text();
    assert.doesNotMatch(html, /<script|\son[a-z]+=/i, 'no script, inline or linked, and no event handler');
    assert.doesNotMatch(html, /<style|\sstyle=/i, 'no inline style (the CSP would refuse it)');
    for (const href of [
      '/demo',
      '/portal',
      '/docs',
      '/favicon.svg',
      '/favicon.ico',
      '/portal/assets/app.css',
    ])
      assert.ok(html.includes(`href="${href}"`), href);
  });

  it('every link and resource of the page answers 200', async () => {
    for (const path of ['/demo', '/portal', '/docs', '/portal/assets/app.css']) {
      const res = await fetch(`${server.baseUrl}${path}`);
      assert.equal(res.status, 200, path);
      await res.arrayBuffer();
    }
  });

  it('GET /favicon.svg is an SVG image and GET /favicon.ico an ICO holding a 32×32 PNG', async () => {
    const svg = await fetch(`${server.baseUrl}/favicon.svg`);
    assert.equal(svg.status, 200);
    assert.equal(svg.headers.get('content-type'), 'image/svg+xml');
    assert.match(await svg.text(), /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>.*<\/svg>$/s);

    const ico = await fetch(`${server.baseUrl}/favicon.ico`);
    assert.equal(ico.status, 200);
    assert.equal(ico.headers.get('content-type'), 'image/x-icon');
    const bytes = Buffer.from(await ico.arrayBuffer());
    assert.deepEqual([bytes.readUInt16LE(0), bytes.readUInt16LE(2), bytes.readUInt16LE(4)], [0, 1, 1]);
    assert.deepEqual([bytes[6], bytes[7]], [32, 32]);
    const size = bytes.readUInt32LE(14);
    const offset = bytes.readUInt32LE(18);
    assert.equal(offset + size, bytes.length);
    const png = bytes.subarray(offset);
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [32, 32], 'IHDR width and height');
  });

  describe('in Chromium', () => {
    let browser: TestBrowser;
    before(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      browser = await startChromium({ viewport: { width: 1024, height: 720 }, baseUrl: server.baseUrl });
    });
    after(() => browser.close());

    it('shows the page styled, with its icon, landmarks and named links, and no console error', async () => {
      const { page } = browser;
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
      });
      const failed: string[] = [];
      page.on('requestfailed', (r) => failed.push(r.url()));
      const icon = page.waitForResponse((r) => r.url().endsWith('/favicon.svg'));
      await page.goto('/');
      assert.equal((await icon).status(), 200);
      assert.equal(await page.getAttribute('html', 'lang'), 'en');
      assert.equal(await page.getByRole('heading', { level: 1 }).count(), 1);
      await page.getByRole('main').waitFor();
      for (const name of ['Webchat demo', 'Portal', 'API reference'])
        assert.equal(await page.getByRole('link', { name, exact: true }).count(), 1, name);
      // The portal's stylesheet applies: the brand in its accent colour.
      assert.equal(
        await page.locator('.brand').evaluate((el) => getComputedStyle(el).color),
        'rgb(45, 91, 215)',
      );
      await page.screenshot({ path: join(ARTIFACTS, 'landing.png'), fullPage: true });
      assert.deepEqual(problems, [], 'no CSP refusal or failed load');
      assert.deepEqual(failed, []);

      await page.getByRole('link', { name: 'Portal', exact: true }).click();
      await page.getByRole('heading', { name: 'Sign in to the portal' }).waitFor();
    });
  });
});
