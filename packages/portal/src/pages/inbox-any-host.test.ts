import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { screenshot, type TestBrowser } from '@parley/testing/portal/browser';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';
import {
  type ConnectedVisitor,
  connectVisitor,
  createConversation,
  newVisitor,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import type { Page, WebSocketRoute } from 'playwright-core';

/**
 * A new user's first run: `npm start` without PARLEY_PUBLIC_URL (so the public URL is http://localhost:{port}) and
 * the portal opened at http://127.0.0.1:{port}. The inbox must still be live, and say so when it is not.
 */
describe('portal in a browser: the inbox is live whatever host it is opened from', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let guest: ConnectedVisitor;
  let conversation: { id: string; channel: string };
  before(async () => {
    ({ server, browser } = await startPortalPage({
      server: { defaultPublicUrl: true },
      users: { 'kim@acme.test': 'agent' },
      signInAs: 'kim@acme.test',
      seed: async (server, companyId) => {
        const v = newVisitor(companyId);
        conversation = await createConversation(server, v);
        guest = await connectVisitor(server, v, conversation);
      },
    }));
  });
  after(async () => {
    guest?.close();
    await closePortalPage({ server, browser });
  });

  /** The inbox in a page of the signed-in browser, with one conversation open. */
  const openInbox = async (page: Page) => {
    await page.goto('/portal/inbox');
    await page.locator(`a.conversation[data-id="${conversation.id}"]`).click();
    await page.locator('.conv-title', { hasText: `#${conversation.id.slice(0, 8)}` }).waitFor();
  };
  const notice = (page: Page) => page.locator('.transcript-pane .live-notice');

  it('opened at 127.0.0.1 while the public URL is localhost, shows a visitor message live', async () => {
    assert.equal(new URL(server.config.publicUrl).hostname, 'localhost', 'the public URL of a new user');
    const { page } = browser;
    assert.equal(new URL(page.url()).hostname, '127.0.0.1');
    await openInbox(page);
    await page.locator('.transcript-pane[data-live="true"]').waitFor();
    assert.equal(await notice(page).isVisible(), false, 'no notice while live');

    await sendMessage(guest.sub, 'hello from 127.0.0.1');
    await page.locator('.message.user').filter({ hasText: 'hello from 127.0.0.1' }).waitFor();
    await screenshot(page, 'inbox-any-host');
  });

  it('says live updates are off when the connection drops, and clears it once reconnected', async () => {
    const page = await browser.context.newPage();
    try {
      // The real server behind a pass-through route, so the test can cut the line like a restarting node does.
      let cutReconnects = true;
      let line: WebSocketRoute | undefined;
      await page.routeWebSocket(/\/connection\/websocket$/, (ws) => {
        if (line && cutReconnects) {
          ws.close({ code: 3001, reason: 'shutdown' });
          return;
        }
        ws.connectToServer();
        line = ws;
      });
      await openInbox(page);
      await page.locator('.transcript-pane[data-live="true"]').waitFor();

      await line!.close({ code: 3001, reason: 'shutdown' });
      await notice(page)
        .filter({ hasText: /Live updates are off: .*3001 shutdown/ })
        .waitFor();
      assert.equal(await page.locator('.transcript-pane').getAttribute('data-live'), null);
      await screenshot(page, 'inbox-live-dropped');

      cutReconnects = false;
      await page.locator('.transcript-pane[data-live="true"]').waitFor();
      await notice(page).waitFor({ state: 'hidden' });
      await sendMessage(guest.sub, 'back again');
      await page.locator('.message.user').filter({ hasText: 'back again' }).waitFor();
    } finally {
      await page.close();
    }
  });

  describe('with PARLEY_PUBLIC_URL configured as http://localhost:{port}', () => {
    // Config is read per request: the running server behaves as one started with the variable set.
    const configured = (value: boolean) => {
      (server.config as { publicUrlConfigured: boolean }).publicUrlConfigured = value;
    };
    before(() => configured(true));
    after(() => configured(false));

    it('is live at 127.0.0.1 through the page origin its grant carries', async () => {
      const page = await browser.context.newPage();
      try {
        const grant = page.waitForResponse((r) => r.url().endsWith('/realtime'));
        await openInbox(page);
        assert.match(
          (await (await grant).json()).websocket_url,
          /^ws:\/\/localhost:\d+\//,
          'the configured URL',
        );
        await page.locator('.transcript-pane[data-live="true"]').waitFor();
        await sendMessage(guest.sub, 'hello across hosts');
        await page.locator('.message.user').filter({ hasText: 'hello across hosts' }).waitFor();
      } finally {
        await page.close();
      }
    });

    it('says why when the live connection is refused', async () => {
      const page = await browser.context.newPage();
      try {
        // A grant asked for from another origin carries no page origin: the engine refuses the page with 4503. The
        // page's one connection is made with the inbox's grant, the transcript's subscription with its own.
        await page.route(
          (url) =>
            url.pathname.endsWith('/inbox/realtime') ||
            url.pathname.endsWith(`/inbox/conversations/${conversation.id}/realtime`),
          async (route) => {
            const headers = { ...route.request().headers(), origin: 'http://elsewhere.example' };
            await route.fulfill({ response: await route.fetch({ headers }) });
          },
        );
        await openInbox(page);
        await notice(page)
          .filter({ hasText: 'Live updates are off: the connection was refused (4503 origin not allowed)' })
          .waitFor();
        assert.equal(await page.locator('.transcript-pane').getAttribute('data-live'), null);
        await screenshot(page, 'inbox-live-refused');
      } finally {
        await page.close();
      }
    });
  });
});
