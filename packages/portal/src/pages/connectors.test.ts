import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { screenshot, type TestBrowser, waitForClipboard } from '@parley/testing/portal/browser';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';

describe('portal in a browser: connectors page', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let upstream: Server;
  let upstreamUrl: string;
  const seenAuth: string[] = [];
  before(async () => {
    upstream = createServer((req, res) => {
      seenAuth.push(String(req.headers.authorization));
      res.writeHead(req.headers.authorization === 'Bearer rotated-key-2' ? 200 : 401).end();
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}/hook`;
    ({ server, browser } = await startPortalPage({ section: 'Connectors' }));
  });
  after(async () => {
    await closePortalPage({ server, browser });
    await new Promise((r) => upstream?.close(r));
  });

  it('shows the server’s validation error next to the field', async () => {
    const { page } = browser;
    await page.getByLabel('Name').fill('Broken');
    await page.getByLabel('URL').fill('not a url');
    await page.getByRole('button', { name: 'Create connector' }).click();
    const error = page.locator('.field.invalid .field-error');
    await error.waitFor();
    assert.match((await error.textContent())!, /url/i);
    assert.equal(await page.getByLabel('URL').getAttribute('aria-invalid'), 'true');
  });

  it('creates a connector with a copyable ID, rotates its key through a write-only field and tests the connection', async () => {
    const { page } = browser;
    await page.getByLabel('Name').fill('Bot hook');
    await page.getByLabel('Type').selectOption('webhook');
    await page.getByLabel('URL').fill(upstreamUrl);
    await page.getByLabel('API key (optional)').fill('first-key-1');
    await page.getByRole('button', { name: 'Create connector' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Bot hook' });
    await row.getByText('Set (version 1)').waitFor();
    const id = (await row.locator('code').first().textContent())!.trim();
    assert.match(id, /^[0-9a-f-]{36}$/);
    await row.getByRole('button', { name: 'Copy ID' }).click();
    await waitForClipboard(page, id);

    await row.getByRole('button', { name: 'Rotate key of Bot hook' }).click();
    const dialog = page.getByRole('dialog');
    const keyField = dialog.getByLabel('New API key');
    assert.equal(await keyField.getAttribute('type'), 'password', 'the key field is write-only');
    await keyField.fill('rotated-key-2');
    await screenshot(page, 'connectors-rotate');
    await dialog.getByRole('button', { name: 'Save new key' }).click();
    await page.getByText('now version 2').waitFor();
    await row.getByText('Set (version 2)').waitFor();
    assert.notEqual(await row.getByRole('cell').nth(5).textContent(), 'Never');

    await row.getByRole('button', { name: 'Test connection of Bot hook' }).click();
    await page.getByText(/answered HTTP 200 in \d+ ms \(key version 2\)/).waitFor();
    assert.equal(seenAuth.at(-1), 'Bearer rotated-key-2', 'the test used the new key');
    const html = await page.content();
    assert.ok(!html.includes('rotated-key-2') && !html.includes('first-key-1'), 'no key is on the page');
    await screenshot(page, 'connectors');
    const stored = await server.ctx.connectors.get((await server.ctx.companies.list())[0]!.id, id);
    assert.equal(stored.keyVersion, 2);
  });
});
