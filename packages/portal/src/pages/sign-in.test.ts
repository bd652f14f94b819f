import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { screenshot, signIn, type TestBrowser } from '@parley/testing/portal/browser';
import { PASSWORD } from '@parley/testing/portal/portal-fixtures';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';

describe('portal in a browser: sign-in, roles, CSRF', () => {
  let server: TestServer;
  let browser: TestBrowser;
  before(async () => {
    ({ server, browser } = await startPortalPage({
      users: { 'admin@acme.test': 'admin', 'agent@acme.test': 'agent' },
      signInAs: null,
    }));
  });
  after(() => closePortalPage({ server, browser }));

  it('sends a visitor to sign-in, shows errors inline, signs in and out', async () => {
    const { page } = browser;
    await page.goto('/portal/api-clients');
    await page.getByRole('heading', { name: 'Sign in to the portal' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/portal/sign-in');
    await page.getByRole('button', { name: 'Sign in' }).click();
    assert.equal(await page.locator('#main .field-error').first().textContent(), 'This field is required.');
    await page.getByLabel('Email').fill('admin@acme.test');
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'The email or password is wrong.' }).waitFor();
    await screenshot(page, 'sign-in-error');

    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Admins land on the inbox too; settings are one click away in the menu.
    await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    const cookies = await browser.context.cookies();
    const session = cookies.find((c) => c.name === 'parley_portal_session');
    assert.ok(session?.httpOnly, 'the session cookie is httpOnly (no script can read it)');
    assert.equal(await page.evaluate(() => document.cookie), '');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the portal' }).waitFor();
    await page.goto('/portal/company');
    await page.getByRole('heading', { name: 'Sign in to the portal' }).waitFor();
  });

  it('refuses a state-changing request without the CSRF token, even from the portal page', async () => {
    const { page } = browser;
    await signIn(page, 'admin@acme.test', PASSWORD);
    const answer = await page.evaluate(async () => {
      const res = await fetch('/portal/api/api-clients', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'forged', scopes: ['connector:write'] }),
      });
      return { status: res.status, body: await res.json() };
    });
    assert.equal(answer.status, 403);
    assert.equal(answer.body.code, 'csrf_failed');
    await page.reload();
    await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    assert.equal(await page.getByText('forged').count(), 0);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the portal' }).waitFor();
  });

  it('keeps an agent out of settings: no links, a refusal page, and 403 from the API', async () => {
    const { page } = browser;
    await signIn(page, 'agent@acme.test', PASSWORD);
    assert.equal(await page.getByRole('link', { name: 'API clients' }).count(), 0);
    assert.equal(await page.getByRole('link', { name: 'Company' }).count(), 0);
    for (const path of ['/portal/api-clients', '/portal/company']) {
      await page.goto(path);
      await page.getByRole('heading', { name: 'Not available' }).waitFor();
    }
    await screenshot(page, 'agent-refused');
    const status = await page.evaluate(async () => (await fetch('/portal/api/company')).status);
    assert.equal(status, 403);
    await page.getByRole('button', { name: 'Sign out' }).click();
  });
});
