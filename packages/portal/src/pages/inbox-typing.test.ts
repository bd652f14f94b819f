import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { screenshot, type TestBrowser } from '@parley/testing/portal/browser';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';
import { createWebchat, memoryStorage, type Webchat } from '@parley/webchat-sdk';
import WebSocket from 'ws';

/**
 * The visitor typing indicator in Chromium (docs/routing.md "Live inbox"): a visitor's SDK calls `chat.typing()`;
 * the agent's open conversation shows "Visitor is typing…", which goes 5 s after the last event, or at once when the
 * visitor's message arrives. Screenshot in test-artifacts/portal/.
 */
describe('portal in a browser: the visitor typing indicator', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let companyId: string;
  let chat: Webchat;
  before(async () => {
    ({ server, browser, companyId } = await startPortalPage({
      server: { config: { webchat: { streamFlushIntervalMs: 0 } } },
      users: { 'kim@acme.test': 'admin' },
      signInAs: 'kim@acme.test',
    }));
    browser.page.on('pageerror', (err) => console.error('page error:', err.message));
    chat = await createWebchat({
      baseUrl: server.baseUrl,
      companyId,
      storage: memoryStorage(),
      websocket: WebSocket,
    });
  });
  after(async () => {
    chat?.close();
    await closePortalPage({ server, browser });
  });

  it('shows "Visitor is typing…" in the open conversation, then clears it', async () => {
    const { page } = browser;
    await chat.start();
    const id = chat.conversation!.id;
    await page.goto('/portal/inbox');
    await page.locator('[data-inbox-live="true"]').first().waitFor();
    const entry = page.locator(`.conversation-list li[data-id="${id}"]`);
    await entry.locator('a.conversation').click();
    await page.locator('.transcript-pane[data-live="true"]').waitFor();
    const paneNote = page.locator('.transcript-pane .typing-note');
    assert.equal(await paneNote.isVisible(), false, 'nobody is typing yet');

    chat.typing();
    await paneNote.filter({ hasText: 'Visitor is typing…' }).waitFor({ state: 'visible' });
    await entry.locator('.typing-note').waitFor({ state: 'visible' });
    await screenshot(page, 'inbox-visitor-typing');
    const shownAt = Date.now();
    // No further event: it goes about 5 s after the last one.
    await paneNote.waitFor({ state: 'hidden', timeout: 10_000 });
    const shownFor = Date.now() - shownAt;
    assert.ok(shownFor > 3500 && shownFor < 8000, `shown for ${shownFor} ms`);
    assert.equal(await entry.locator('.typing-note').isVisible(), false);

    // Typing again (past the SDK's 3 s throttle), then the message: the indicator goes with the message.
    chat.typing();
    await paneNote.waitFor({ state: 'visible' });
    const sentAt = Date.now();
    await chat.send('Here is my order number');
    await page.locator('.transcript').getByText('Here is my order number').waitFor();
    await paneNote.waitFor({ state: 'hidden', timeout: 2_000 });
    assert.ok(Date.now() - sentAt < 4000, 'cleared by the message, not by the timeout');
  });
});
