import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { screenshot, type TestBrowser, waitForClipboard } from '@parley/testing/portal/browser';
import { requestToken } from '@parley/testing/portal/portal-fixtures';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';

describe('portal in a browser: API clients page', () => {
  let server: TestServer;
  let browser: TestBrowser;
  before(async () => {
    ({ server, browser } = await startPortalPage());
    // Everyone lands on the inbox; API clients are one click away.
    await browser.page.getByRole('link', { name: 'API clients' }).click();
    await browser.page.getByRole('heading', { name: 'API clients', exact: true }).waitFor();
  });
  after(() => closePortalPage({ server, browser }));

  it('validates the form inline before calling the server', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: 'Create API client' }).click();
    const errors = await page.locator('form .field-error:not([hidden])').allTextContents();
    assert.deepEqual(errors, ['This field is required.', 'Choose at least one.']);
    assert.equal(await page.getByLabel('Name').getAttribute('aria-invalid'), 'true');
  });

  it('creates a client, copies its secret once, and the secret gets a token at the real token endpoint', async () => {
    const { page } = browser;
    await page.getByLabel('Name').fill('CI bot');
    await page.getByRole('checkbox', { name: /^connector:read/ }).check();
    await page.getByRole('button', { name: 'Create API client' }).click();
    const secretEl = page.getByTestId('client-secret');
    await secretEl.waitFor();
    const secret = (await secretEl.textContent())!.trim();
    await page.getByText('This is the only time the secret is shown.').waitFor();
    await screenshot(page, 'api-clients-secret-once');

    await page.getByRole('button', { name: 'Copy secret' }).click();
    await waitForClipboard(page, secret);

    const row = page.getByRole('row').filter({ hasText: 'CI bot' });
    await row.waitFor();
    const clientId = (await row.locator('code').first().textContent())!.trim();
    const token = await requestToken(server, clientId, secret);
    assert.equal(token.status, 200);
    assert.equal(token.body.token_type, 'Bearer');
    assert.equal(token.body.expires_in, 3600);

    await page.reload();
    await page.getByRole('row').filter({ hasText: 'CI bot' }).waitFor();
    assert.ok(!(await page.content()).includes(secret), 'after a reload the secret is gone for good');
    assert.equal(await page.getByTestId('client-secret').count(), 0);
    assert.notEqual(
      await row.getByRole('cell').nth(4).textContent(),
      'Never',
      'last used shows the token request',
    );
  });

  it('deletes a client after confirmation and says issued tokens lapse within the hour', async () => {
    const { page } = browser;
    const row = page.getByRole('row').filter({ hasText: 'CI bot' });
    const clientId = (await row.locator('code').first().textContent())!.trim();
    await row.getByRole('button', { name: 'Delete CI bot' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('within the hour').waitFor();
    await screenshot(page, 'api-clients-delete-confirm');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await row.count(), 1, 'cancel keeps the client');
    await row.getByRole('button', { name: 'Delete CI bot' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete client' }).click();
    await page.getByText('Its issued tokens lapse within the hour.').waitFor();
    await page.getByText('No API clients yet.').waitFor();
    const clients = await server.ctx.store.db
      .selectFrom('api_clients')
      .select(['id', 'deleted_at'])
      .where('id', '=', clientId)
      .execute();
    assert.ok(clients[0]?.deleted_at, 'deleted in the store');
  });

  it('pages the list and works at phone width', async () => {
    const { page } = browser;
    for (let i = 1; i <= 12; i++) {
      await page.evaluate(async (n) => {
        const session = await (await fetch('/portal/api/session')).json();
        await fetch('/portal/api/api-clients', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrf_token },
          body: JSON.stringify({ name: `client ${String(n).padStart(2, '0')}`, scopes: ['connector:read'] }),
        });
      }, i);
    }
    await page.reload();
    await page.getByText('1–10 of 12').waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('11–12 of 12').waitFor();
    assert.equal(await page.getByRole('row').filter({ hasText: 'client 12' }).count(), 1);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: 'Previous' }).click();
    await page.getByText('1–10 of 12').waitFor();
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    assert.ok(overflow <= 0, `no horizontal scrolling at phone width (overflow ${overflow}px)`);
    await screenshot(page, 'api-clients-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
