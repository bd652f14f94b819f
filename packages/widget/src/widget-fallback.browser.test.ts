import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startChromium, type TestBrowser } from '@parley/testing/browser';
import { startTestServer, type TestServer } from '@parley/testing/test-server';

/**
 * A visitor behind a proxy that blocks WebSocket: Chromium's WebSocket to `/connection/websocket` is refused before
 * it opens (Playwright answers the handshake with a close, no socket reaches the server), and the widget on the
 * /demo page still chats, over HTTP-streaming, and says so. Screenshot in test-artifacts/widget/ (git-ignored).
 */
const artifacts = join(new URL('../../..', import.meta.url).pathname, 'test-artifacts', 'widget');
let server: TestServer;
let browser: TestBrowser;

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  server = await startTestServer();
  browser = await startChromium({ viewport: { width: 1000, height: 760 } });
  browser.page.on('pageerror', (err) => console.error('page error:', err.message));
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test('with WebSocket blocked, the widget chats over HTTP-streaming and shows it', async () => {
  const { page } = browser;
  let refused = 0;
  await page.routeWebSocket(/\/connection\/websocket/, (ws) => {
    refused++;
    // Closed before it opens, as a proxy that drops the upgrade leaves it: the browser sees close 1006.
    void ws.close({ code: 1006, reason: 'blocked' });
  });
  await page.goto(`${server.baseUrl}/demo`);
  await page.locator('.launcher').click();
  await page.locator('.panel').waitFor({ state: 'visible' });

  const replies = page.locator('.msg.digital_employee');
  await replies.first().and(page.locator('[data-status="complete"]')).waitFor({ timeout: 20_000 });
  await page.locator('.panel[data-transport="http_stream"]').waitFor({ timeout: 10_000 });
  assert.ok(await page.locator('.transport').isVisible(), 'the panel names the fallback');
  assert.match((await page.locator('.transport').textContent()) ?? '', /HTTP streaming/);

  await page.locator('textarea').fill('What can you do?');
  await page.keyboard.press('Enter');
  const reply = replies.nth(1);
  await reply.and(page.locator('[data-status="complete"]')).waitFor({ timeout: 20_000 });
  assert.match(
    (await reply.locator('.body').textContent()) ?? '',
    /^I can answer common questions about Demo/,
  );
  assert.equal(
    await page.locator('.msg.user').first().getAttribute('data-status'),
    'complete',
    'the visitor message went up through /emulation and was stored',
  );
  assert.ok(refused >= 1, 'the widget tried WebSocket first');
  await page.screenshot({ path: join(artifacts, 'fallback-http-stream.png') });
});
