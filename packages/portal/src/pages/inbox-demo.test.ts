import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runCli } from '@parley/server/internal/cli/main';
import { screenshot, signIn, startPortalBrowser, type TestBrowser } from '@parley/testing/portal/browser';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import type { Page } from 'playwright-core';

const PASSWORD = 'twelve chars!';

/**
 * The README's first run: a company and its admin made with the CLI, a visitor chatting on
 * `/demo?company=$COMPANY`, and the admin finding that conversation, live, in the portal inbox — with the public URL
 * left at http://localhost:{port} and everything opened at 127.0.0.1, as a new user does.
 */
describe('first run: the README admin sees the /demo?company= conversation in the inbox', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let company: string;
  before(async () => {
    server = await startTestServer({ defaultPublicUrl: true });
    const parley = async (...args: string[]) => {
      const lines: string[] = [];
      const env = { PARLEY_DATA_DIR: server.dataDir, LOG_LEVEL: 'silent' };
      assert.equal(await runCli([...args, '--json'], (l) => lines.push(l), { env }), 0, lines.join('\n'));
      return JSON.parse(lines.join('\n'));
    };
    company = (await parley('companies', 'create', '--name', 'Acme')).id;
    const admin = ['--email', 'you@example.com', '--password', PASSWORD, '--role', 'admin'];
    await parley('users', 'create', '--company', company, ...admin);
    browser = await startPortalBrowser(server.baseUrl);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const say = async (demo: Page, text: string) => {
    await demo.locator('textarea').fill(text);
    await demo.keyboard.press('Enter');
    await demo
      .locator('.msg.user[data-status="complete"]')
      .filter({ hasText: text })
      .waitFor({ timeout: 15_000 })
      .catch(async (err: Error) => {
        // What the widget shows instead, so a failure in CI says where the message stopped.
        const shown = await demo
          .locator('.msg')
          .evaluateAll((nodes) =>
            nodes.map(
              (n) => `${n.className}[${(n as HTMLElement).dataset.status}] ${n.textContent?.slice(0, 60)}`,
            ),
          );
        await screenshot(demo, 'first-run-demo-failed');
        throw new Error(`${err.message}\nwidget messages: ${JSON.stringify(shown)}`);
      });
  };

  it('shows the conversation started on the demo page, and its next message live', async () => {
    const demo = browser.page;
    await demo.goto(`/demo?company=${company}`);
    assert.match((await demo.locator('body > p').first().textContent()) ?? '', new RegExp(company));
    await demo.locator('.launcher').click();
    await demo.locator('.panel').waitFor({ state: 'visible' });
    await say(demo, 'Hello from the demo page');

    const portal = await browser.context.newPage();
    await signIn(portal, 'you@example.com', PASSWORD);
    await portal.goto('/portal/inbox');
    await portal.locator('a.conversation').first().click();
    await portal.locator('.message.user').filter({ hasText: 'Hello from the demo page' }).waitFor();
    await portal.locator('.transcript-pane[data-live="true"]').waitFor();

    await say(demo, 'Is anyone there?');
    await portal.locator('.message.user').filter({ hasText: 'Is anyone there?' }).waitFor();
    await screenshot(demo, 'first-run-demo');
    await screenshot(portal, 'first-run-inbox');
  });
});
