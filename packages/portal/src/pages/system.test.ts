import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { screenshot, type TestBrowser } from '@parley/testing/portal/browser';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';
import { connectVisitor, createConversation, newVisitor } from '@parley/testing/webchat/webchat-fixtures';

describe('portal in a browser: system page', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let companyId: string;
  before(async () => {
    ({ server, browser, companyId } = await startPortalPage({ section: 'System' }));
  });
  after(() => closePortalPage({ server, browser }));

  it('shows this node and follows its connections without a reload', async () => {
    const { page } = browser;
    const row = page.locator('tr[data-node]').filter({ hasText: '(this node)' });
    await row.waitFor();
    const connections = () => row.locator('td').first().textContent();
    const before = Number(await connections());

    const v = newVisitor(companyId);
    const visitor = await connectVisitor(server, v, await createConversation(server, v));
    try {
      await page.waitForFunction(
        (n) => Number(document.querySelector('tr[data-node] td')?.textContent) > n,
        before,
        { timeout: 10_000 },
      );
      assert.ok(Number(await connections()) > before);
      await screenshot(page, 'system');
    } finally {
      visitor.close();
    }
  });
});
