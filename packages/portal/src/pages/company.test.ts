import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../../../server/src/testing/test-server.ts';
import { UsersService } from '../../../server/src/users/users.service.ts';
import { openBrowser, screenshot, signIn, type TestBrowser } from '../testing/browser.ts';

const PASSWORD = 'correct horse battery';

describe('portal in a browser: company page', () => {
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
    browser = await openBrowser(server.baseUrl);
    await signIn(browser.page, 'admin@acme.test', PASSWORD);
    await browser.page.getByRole('link', { name: 'Company' }).click();
    await browser.page.getByRole('heading', { name: 'Company', level: 1 }).waitFor();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows the company ID to copy and edits the allowed origins with inline errors', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: 'Copy company ID' }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), companyId);

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
});
