import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startChromium, type TestBrowser } from '@parley/testing/browser';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import type { Page } from 'playwright-core';

/**
 * A cited answer in the widget, in headless Chromium on the server's /demo page: the company's builtin digital
 * employee answers from a knowledge source (docs/knowledge.md), and the widget shows the source as a safe link under
 * the answer; a source whose URL is not http(s) shows as plain text. Screenshot in test-artifacts/widget/.
 */
const artifacts = join(new URL('../../..', import.meta.url).pathname, 'test-artifacts', 'widget');
let server: TestServer;
let browser: TestBrowser;
let page: Page;
let companyId: string;

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  server = await startTestServer();
  companyId = (await server.ctx.companies.create('Fernwood Books')).id;
  const employee = await server.ctx.digitalEmployees.create({
    companyId,
    name: 'Ava',
    responder: 'builtin',
    settings: { greeting: null, word_delay_ms: 5 },
  });
  await server.ctx.digitalEmployees.setDefault(companyId, employee.id);
  await server.ctx.knowledge.create(
    companyId,
    {
      kind: 'text',
      title: 'Returns and refunds',
      url: 'https://help.example/returns',
      content:
        '# Returns and refunds\n\n## Refunds\n\nOnce the parcel arrives, the refund is paid to your original payment ' +
        'method within **five working days**.',
    },
    { actor: 'test' },
  );
  browser = await startChromium({ viewport: { width: 1000, height: 760 } });
  page = browser.page;
  page.on('pageerror', (err) => console.error('page error:', err.message));
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test('an answer from knowledge shows its source as a link that opens safely', async () => {
  await page.goto(`${server.baseUrl}/demo?company=${companyId}`);
  await page.locator('.launcher').click();
  await page.locator('textarea').fill('When is my refund paid?');
  await page.keyboard.press('Enter');
  const reply = page.locator('.msg.digital_employee[data-status="complete"]').first();
  await reply.waitFor({ timeout: 20_000 });
  assert.match((await reply.locator('.body').textContent()) ?? '', /five working days/);
  const sources = reply.locator('nav.sources');
  await sources.waitFor();
  assert.equal(await sources.getAttribute('aria-label'), 'Sources');
  const link = sources.locator('a');
  assert.equal(await link.count(), 1);
  assert.equal(await link.textContent(), 'Returns and refunds › Refunds');
  assert.equal(await link.getAttribute('href'), 'https://help.example/returns');
  assert.equal(await link.getAttribute('target'), '_blank');
  assert.equal(await link.getAttribute('rel'), 'noopener noreferrer');
  await page.screenshot({ path: join(artifacts, 'knowledge-sources.png') });
});
