import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { screenshot, type TestBrowser } from '@parley/testing/portal/browser';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';

describe('portal in a browser: digital employees page', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let companyId: string;
  before(async () => {
    ({ server, browser, companyId } = await startPortalPage({
      section: 'Digital employees',
      // The connector a webhook employee is created on; the form lists it when the page loads.
      seed: async (server, companyId) => {
        await server.ctx.connectors.create(
          { companyId, name: 'Bot hook', type: 'webhook', url: 'http://127.0.0.1:9/hook' },
          { actor: 'test' },
        );
      },
    }));
  });
  after(() => closePortalPage({ server, browser }));

  it('creates a webhook digital employee (with an inline server error first), edits it and makes it the default', async () => {
    const { page } = browser;
    const form = page
      .locator('section')
      .filter({ has: page.getByRole('heading', { name: 'New digital employee' }) });
    assert.equal(await form.getByLabel('Model').isVisible(), false, 'builtin: no model field');
    await form.getByRole('textbox', { name: 'Name', exact: true }).fill('Max');
    const handoverTool = form.getByLabel('May hand the conversation to a person (handover tool)');
    await form.getByLabel('Responder').selectOption('openai');
    assert.equal(await handoverTool.isVisible(), true, 'openai: the handover tool can be switched off');
    assert.equal(await handoverTool.isChecked(), true, 'on by default');
    await form.getByLabel('Responder').selectOption('webhook');
    assert.equal(await handoverTool.isVisible(), false, 'webhook: no tools');
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
    await page
      .getByRole('row')
      .filter({ hasText: 'Max Support' })
      .getByText('Default', { exact: true })
      .waitFor();
    const def = await server.ctx.digitalEmployees.getDefault(companyId);
    assert.equal(def.name, 'Max Support');
    assert.equal(def.responder, 'webhook');
    assert.deepEqual(def.settings, { greeting: 'Hello from Max' });
    await screenshot(page, 'digital-employees');
  });
});
