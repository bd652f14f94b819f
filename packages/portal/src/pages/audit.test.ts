import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestServer } from '../../../server/src/testing/test-server.ts';
import { openSection, screenshot, type TestBrowser } from '../testing/browser.ts';
import { closePortalPage, openPortalPage } from '../testing/portal-page.ts';

describe('portal in a browser: audit log page', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let secret = '';
  before(async () => {
    ({ server, browser } = await openPortalPage());
    // Activity to audit, made through the portal API with the page's own session and CSRF token.
    secret = await browser.page.evaluate(async () => {
      const session = await (await fetch('/portal/api/session')).json();
      const headers = { 'content-type': 'application/json', 'x-csrf-token': session.csrf_token };
      const created = await (
        await fetch('/portal/api/api-clients', {
          method: 'POST',
          headers,
          body: JSON.stringify({ name: 'Audited', scopes: ['connector:read'] }),
        })
      ).json();
      for (let i = 0; i < 24; i++) {
        await fetch('/portal/api/company/allowed-origins', {
          method: 'PUT',
          headers,
          body: JSON.stringify({ allowed_origins: [`https://s${i}.example`] }),
        });
      }
      return created.client_secret as string;
    });
    await openSection(browser.page, 'Audit log');
  });
  after(() => closePortalPage({ server, browser }));

  it('pages newest first, filters by type, names the actor and shows no secret', async () => {
    const { page } = browser;
    const rows = page.locator('tbody tr');
    await page.getByText('Page 1').waitFor();
    assert.equal(await rows.count(), 20);
    assert.match((await rows.first().textContent())!, /company\.allowed_origins_changed/);
    assert.match((await rows.first().textContent())!, /admin@acme\.test/);
    await page.getByRole('button', { name: 'Older' }).click();
    await page.getByText('Page 2').waitFor();
    assert.match((await page.locator('tbody').textContent())!, /api_client\.created/);
    assert.match((await page.locator('tbody').textContent())!, /portal\.signed_in/);
    assert.equal(await page.getByRole('button', { name: 'Older' }).isDisabled(), true);
    await page.getByRole('button', { name: 'Newer' }).click();
    await page.getByText('Page 1').waitFor();

    await page.getByLabel('Event type').fill('api_client.created');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1);
    assert.match((await rows.first().textContent())!, /Audited/);
    assert.ok(!(await page.content()).includes(secret), 'the client secret is not in the audit log');
    await screenshot(page, 'audit');
  });
});
