import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { screenshot, type TestBrowser, waitForClipboard } from '@parley/testing/portal/browser';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';

describe('portal in a browser: company page', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let companyId: string;
  before(async () => {
    ({ server, browser, companyId } = await startPortalPage({ section: 'Company' }));
  });
  after(() => closePortalPage({ server, browser }));

  it('shows the company ID to copy and edits the allowed origins with inline errors', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: 'Copy company ID' }).click();
    await waitForClipboard(page, companyId);

    await page.getByRole('textbox', { name: 'Allowed origins' }).fill('https://shop.example/checkout');
    await page.getByRole('button', { name: 'Save allowed origins' }).click();
    await page.locator('.field.invalid .field-error').filter({ hasText: 'must be an origin only' }).waitFor();

    await page
      .getByRole('textbox', { name: 'Allowed origins' })
      .fill('https://shop.example\nhttps://www.shop.example');
    await page.getByRole('button', { name: 'Save allowed origins' }).click();
    await page.getByText('Allowed origins saved.').waitFor();
    assert.deepEqual((await server.ctx.companies.get(companyId)).allowedOrigins, [
      'https://shop.example',
      'https://www.shop.example',
    ]);
    await screenshot(page, 'company');
  });

  it('edits the attachment limits: the largest file and the allowed types, SVG included on request', async () => {
    const { page } = browser;
    const size = page.getByRole('textbox', { name: 'Largest attachment (MiB)' });
    assert.equal(await size.inputValue(), '10');
    await size.fill('0');
    await page.getByRole('button', { name: 'Save attachment limits' }).click();
    await page.getByText('Enter a size from 0.01 to 1024 MiB.').waitFor();
    await size.fill('2.5');
    await page.getByRole('checkbox', { name: 'SVG images (always downloaded, never shown inline)' }).check();
    await page.getByRole('checkbox', { name: 'PDF documents' }).uncheck();
    await page.getByRole('button', { name: 'Save attachment limits' }).click();
    await page.getByText('Attachment limits saved.').waitFor();
    const settings = await server.ctx.webchat.attachments.settingsFor(companyId);
    assert.equal(settings.maxAttachmentBytes, 2.5 * 1024 * 1024);
    assert.deepEqual([...settings.allowedTypes].sort(), [
      'image/gif',
      'image/jpeg',
      'image/png',
      'image/svg+xml',
      'image/webp',
      'text/plain',
    ]);
    await screenshot(page, 'company-attachments');
  });
});
