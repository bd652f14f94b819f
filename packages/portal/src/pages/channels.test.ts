import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { screenshot, type TestBrowser, waitForClipboard } from '@parley/testing/portal/browser';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';

describe('portal in a browser: channels page', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let companyId: string;
  before(async () => {
    ({ server, browser, companyId } = await startPortalPage({ section: 'Channels' }));
  });
  after(() => closePortalPage({ server, browser }));

  it('creates a channel, shows its ID and routed digital employee, and opens a ready-to-paste snippet', async () => {
    const { page } = browser;
    await page.getByRole('textbox', { name: 'Allowed origins' }).fill('https://shop.example/cart');
    await page.getByLabel('Name').fill('Web shop');
    await page.getByRole('button', { name: 'Create channel' }).click();
    await page.locator('.field.invalid .field-error').filter({ hasText: 'must be an origin only' }).waitFor();

    await page.getByRole('textbox', { name: 'Allowed origins' }).fill('https://shop.example');
    await page.getByRole('button', { name: 'Create channel' }).click();
    await page.getByText('Created channel “Web shop”.').waitFor();
    const channels = await server.ctx.store.db.selectFrom('channels').selectAll().execute();
    assert.equal(channels.length, 1);
    const channelId = channels[0]!.id;
    const expected = `<script src="${server.baseUrl}/widget.js" data-company="${companyId}" data-channel="${channelId}"></script>`;
    assert.equal(
      (await page.getByTestId('widget-snippet').textContent())!.trim(),
      expected,
      'the snippet opens right after creation',
    );

    await page.reload();
    const row = page.getByRole('row').filter({ hasText: 'Web shop' });
    await row.waitFor();
    assert.equal((await row.locator('code').first().textContent())!.trim(), channelId);
    assert.match((await row.textContent())!, /https:\/\/shop\.example/);
    const routed = await server.ctx.digitalEmployees.getDefault(companyId);
    assert.equal(channels[0]!.digital_employee_id, routed.id);
    assert.ok((await row.textContent())!.includes(routed.name), 'the routed digital employee is named');
    await row.getByRole('button', { name: 'Show snippet for Web shop' }).click();
    const snippet = page.getByTestId('widget-snippet');
    assert.equal((await snippet.textContent())!.trim(), expected);
    await page.getByRole('button', { name: 'Copy snippet' }).click();
    await waitForClipboard(page, expected);
    await screenshot(page, 'channels-snippet');
  });
});
