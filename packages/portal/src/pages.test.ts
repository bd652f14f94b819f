import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestBrowser } from '@parley/testing/portal/browser';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';
import { PORTAL_PAGES, SIGN_IN_PATH } from './pages.ts';

/**
 * Every page of the portal's router (pages.ts, the list main.ts routes) opened the way a person opens a bookmark, a
 * link from an e-mail or a reload: a fresh tab straight at its URL, no navigation inside the SPA first.
 */
describe('portal in a browser: every page loads from a fresh tab at its own URL', () => {
  let server: TestServer;
  let browser: TestBrowser;
  before(async () => {
    ({ server, browser } = await startPortalPage());
  });
  after(() => closePortalPage({ server, browser }));

  for (const { path, title } of PORTAL_PAGES) {
    it(`${path} (${title})`, async () => {
      const tab = await browser.context.newPage();
      try {
        const response = await tab.goto(path);
        assert.equal(response?.status(), 200);
        assert.match(response?.headers()['content-type'] ?? '', /^text\/html/);
        await tab.getByRole('heading', { name: title, level: 1 }).waitFor();
        assert.equal(new URL(tab.url()).pathname, path, 'the page stays at its own URL');
        assert.equal(await tab.title(), `${title} · Parley`);
        assert.equal(
          await tab
            .getByRole('navigation', { name: 'Portal' })
            .getByRole('link', { name: title })
            .getAttribute('aria-current'),
          'page',
        );
      } finally {
        await tab.close();
      }
    });
  }

  it('the portal root and the sign-in page load too; other paths under /portal stay 404', async () => {
    const tab = await browser.context.newPage();
    try {
      for (const path of ['/portal', SIGN_IN_PATH]) {
        const response = await tab.goto(path);
        assert.equal(response?.status(), 200, path);
        // Signed in: both lead to the admin's home page, the first of the list.
        await tab.getByRole('heading', { name: PORTAL_PAGES[0].title, level: 1 }).waitFor();
      }
    } finally {
      await tab.close();
    }
    const missing = await fetch(`${server.baseUrl}/portal/no-such-page`);
    assert.equal(missing.status, 404);
    assert.match(missing.headers.get('content-type') ?? '', /json/);
  });
});
