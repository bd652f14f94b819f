import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../../../server/src/testing/test-server.ts';
import { UsersService } from '../../../server/src/users/users.service.ts';
import { openBrowser, screenshot, signIn, type TestBrowser } from '../testing/browser.ts';

const PASSWORD = 'correct horse battery';

describe('portal in a browser: digital employees page', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let companyId: string;
  before(async () => {
    server = await startTestServer();
    companyId = (await server.ctx.companies.create('Acme')).id;
    await new UsersService(server.ctx.store.db).create({
      companyId,
      email: 'admin@acme.test',
      password: PASSWORD,
      role: 'admin',
    });
    await server.ctx.connectors.create(
      { companyId, name: 'Bot hook', type: 'webhook', url: 'http://127.0.0.1:9/hook' },
      { actor: 'test' },
    );
    browser = await openBrowser(server.baseUrl);
    await signIn(browser.page, 'admin@acme.test', PASSWORD);
    await browser.page.getByRole('link', { name: 'Digital employees' }).click();
    await browser.page.getByRole('heading', { name: 'Digital employees', level: 1 }).waitFor();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('creates a webhook digital employee (with an inline server error first), edits it and makes it the default', async () => {
    const { page } = browser;
    const form = page
      .locator('section')
      .filter({ has: page.getByRole('heading', { name: 'New digital employee' }) });
    assert.equal(await form.getByLabel('Model').isVisible(), false, 'builtin: no model field');
    await form.getByRole('textbox', { name: 'Name', exact: true }).fill('Max');
    await form.getByLabel('Responder').selectOption('webhook');
    assert.equal(await form.getByLabel('Connector').isVisible(), true);
    await form.getByRole('button', { name: 'Create digital employee' }).click();
    await form
      .locator('.field.invalid')
      .filter({ hasText: 'Connector' })
      .getByText(/needs a connector/)
      .waitFor();

    await form.getByLabel('Connector').selectOption({ label: 'Bot hook (webhook)' });
    await form.getByLabel('Greeting').fill('Hello from Max');
    await form.getByRole('button', { name: 'Create digital employee' }).click();
    await page.getByText('Created “Max”.').waitFor();
    const row = page.getByRole('row').filter({ hasText: 'Max' });
    await row.getByText('Bot hook').waitFor();

    await row.getByRole('button', { name: 'Edit Max' }).click();
    const dialog = page.getByRole('dialog');
    assert.equal(await dialog.getByLabel('Greeting').inputValue(), 'Hello from Max');
    await dialog.getByRole('textbox', { name: 'Name', exact: true }).fill('Max Support');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved “Max Support”.').waitFor();

    await page.getByRole('button', { name: 'Make Max Support the default' }).click();
    await page.getByRole('row').filter({ hasText: 'Max Support' }).getByText('Default', { exact: true }).waitFor();
    const def = await server.ctx.digitalEmployees.getDefault(companyId);
    assert.equal(def.name, 'Max Support');
    assert.equal(def.responder, 'webhook');
    assert.deepEqual(def.settings, { greeting: 'Hello from Max' });
    await screenshot(page, 'digital-employees');
  });
});
