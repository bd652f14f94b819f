import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  openSection,
  screenshot,
  signIn,
  startPortalBrowser,
  type TestBrowser,
} from '@parley/testing/portal/browser';
import { PASSWORD } from '@parley/testing/portal/portal-fixtures';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';

describe('portal in a browser: display names (users page for admins, profile page for everyone)', () => {
  let server: TestServer;
  let browser: TestBrowser;
  before(async () => {
    ({ server, browser } = await startPortalPage({
      users: { 'admin@acme.test': 'admin', 'you@acme.test': 'agent' },
      section: 'Users',
    }));
  });
  after(() => closePortalPage({ server, browser }));

  const userByEmail = async (email: string) =>
    (await server.ctx.users.list((await server.ctx.companies.list())[0]!.id)).find((u) => u.email === email)!;

  it('an admin sees the company’s users and gives one a display name', async () => {
    const { page } = browser;
    const agentRow = page.locator('tr[data-user]').filter({ hasText: 'you@acme.test' });
    await agentRow.getByText('you (from the email)').waitFor();
    await page.getByRole('combobox', { name: 'User' }).selectOption({ label: 'you — you@acme.test' });
    await page.getByRole('textbox', { name: 'Display name' }).fill('x'.repeat(80));
    await page.getByRole('textbox', { name: 'Display name' }).fill('  Dana   Reyes ');
    await page.getByRole('button', { name: 'Save display name' }).click();
    await page.getByText('you@acme.test is now shown as “Dana Reyes”.').waitFor();
    await agentRow.getByRole('cell', { name: 'Dana Reyes', exact: true }).waitFor();
    assert.equal((await userByEmail('you@acme.test')).name, 'Dana Reyes');
    await screenshot(page, 'users');
  });

  it('an agent has no users page but names themselves on their profile; the header follows', async () => {
    const agent = await startPortalBrowser(server.baseUrl);
    try {
      const { page } = agent;
      await signIn(page, 'you@acme.test', PASSWORD);
      const nav = page.getByRole('navigation', { name: 'Portal' });
      assert.equal(await nav.getByRole('link', { name: 'Users' }).count(), 0);
      await openSection(page, 'Your profile');
      const field = page.getByRole('textbox', { name: 'Display name' });
      assert.equal(await field.inputValue(), 'Dana Reyes');
      await field.fill('Dana\u0007');
      await page.getByRole('button', { name: 'Save display name' }).click();
      await page.locator('.field.invalid .field-error').filter({ hasText: 'without line breaks' }).waitFor();
      await field.fill('Dana');
      await page.getByRole('button', { name: 'Save display name' }).click();
      await page.getByText('Visitors now see you as “Dana”.').waitFor();
      await page.locator('header .who').filter({ hasText: 'Acme · Dana · you@acme.test (agent)' }).waitFor();
      assert.equal((await userByEmail('you@acme.test')).name, 'Dana');
      await screenshot(page, 'profile');

      await field.fill('');
      await page.getByRole('button', { name: 'Save display name' }).click();
      await page.getByText('Visitors now see you as “you”.').waitFor();
      assert.equal((await userByEmail('you@acme.test')).name, null);
    } finally {
      await agent.close();
    }
  });
});
