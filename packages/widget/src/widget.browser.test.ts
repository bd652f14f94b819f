import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ensureDemo } from '@parley/server/internal/widget-assets/demo-company';
import { startChromium, type TestBrowser } from '@parley/testing/browser';
import { createTestClient, fetchToken } from '@parley/testing/oauth/oauth-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import type { Page } from 'playwright-core';

/**
 * The widget in headless Chromium on the server's /demo page: open, chat with a streamed reply, reload and resume,
 * go offline and back, and an agent message carrying HTML that must not execute. Screenshots go to
 * test-artifacts/widget/ (git-ignored).
 */
const artifacts = join(new URL('../../..', import.meta.url).pathname, 'test-artifacts', 'widget');
let server: TestServer;
let browser: TestBrowser;
let page: Page;

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  server = await startTestServer();
  browser = await startChromium({ viewport: { width: 1000, height: 760 } });
  page = browser.page;
  page.on('pageerror', (err) => console.error('page error:', err.message));
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const shot = (name: string) => page.screenshot({ path: join(artifacts, `${name}.png`) });
const messages = (role: string) => page.locator(`.msg.${role}`);
/** The element focused inside the widget's shadow root. */
const focusedInWidget = () =>
  page.evaluate(() => {
    const active = document.querySelector('[data-parley-widget]')?.shadowRoot
      ?.activeElement as HTMLElement | null;
    return active ? active.id || active.className : null;
  });

async function lastReplyWhenComplete(count: number): Promise<string> {
  const reply = messages('digital_employee').nth(count - 1);
  await reply.and(page.locator('[data-status="complete"]')).waitFor({ timeout: 20_000 });
  return (await reply.locator('.body').textContent()) ?? '';
}

test('the widget chats, streams, resumes after reload, survives going offline and renders markup inertly', async () => {
  await page.goto(`${server.baseUrl}/demo`);

  // Keyboard: Tab reaches the launcher, Enter opens the panel and focus moves into the composer.
  // (The page's scrollable code sample is a tab stop too, so a few Tabs may be needed.)
  for (let i = 0; i < 5 && (await focusedInWidget()) !== 'launcher'; i++) await page.keyboard.press('Tab');
  assert.equal(await focusedInWidget(), 'launcher');
  await page.keyboard.press('Enter');
  await page.locator('.panel').waitFor({ state: 'visible' });
  assert.equal(await page.locator('.launcher').getAttribute('aria-expanded'), 'true');
  assert.equal(await focusedInWidget(), 'parley-input');

  // The builtin digital employee greets first.
  const greeting = await lastReplyWhenComplete(1);
  assert.match(greeting, /Ava/);

  // Send with Enter; the visitor's message shows at once, then the reply streams in and completes. Each text the
  // reply shows is recorded in the page as it is drawn: polled from here, a loaded machine's round trips could step
  // over most of a short stream.
  await page.evaluate(() => {
    const shadow = document.querySelector('[data-parley-widget]')!.shadowRoot!;
    const growth: string[] = [];
    (window as unknown as { __growth: string[] }).__growth = growth;
    new MutationObserver(() => {
      const text = shadow.querySelectorAll('.msg.digital_employee')[1]?.querySelector('.body')?.textContent;
      if (typeof text === 'string' && growth.at(-1) !== text) growth.push(text);
    }).observe(shadow, { childList: true, characterData: true, subtree: true });
  });
  await page.locator('textarea').fill('What can you do?');
  await page.keyboard.press('Enter');
  await messages('user').first().waitFor();
  assert.equal(await messages('user').first().locator('.body').textContent(), 'What can you do?');
  const reply = messages('digital_employee').nth(1);
  await reply.waitFor({ timeout: 20_000 });
  await shot('1-streaming');
  const finalText = await lastReplyWhenComplete(2);
  const growth = await page.evaluate(() => (window as unknown as { __growth: string[] }).__growth);
  assert.match(finalText, /^I can answer common questions about Demo/);
  assert.ok(growth.length >= 3, `the reply grew on screen in steps (${growth.length} distinct texts)`);
  // Markdown became elements: **human** is bold.
  assert.equal(await reply.locator('strong').first().textContent(), 'human');
  // The live region announces the completed reply (not each partial).
  await page.waitForFunction(() =>
    (
      document.querySelector('[data-parley-widget]')?.shadowRoot?.querySelector('[aria-live="polite"]')
        ?.textContent ?? ''
    ).includes('I can answer common questions about Demo'),
  );
  await shot('2-reply-complete');

  // Reload: the panel reopens and the same conversation is back.
  const before = await page.locator('.msg .body').allTextContents();
  await page.reload();
  await page.locator('.panel').waitFor({ state: 'visible' });
  await lastReplyWhenComplete(2);
  assert.deepEqual(await page.locator('.msg .body').allTextContents(), before);
  await shot('3-after-reload');

  // Offline: the widget says so, a message sent now waits as pending and goes out when the network is back.
  await browser.context.setOffline(true);
  await page.locator('.panel:not([data-connection="connected"])').waitFor({ timeout: 15_000 });
  assert.ok(await page.locator('.status').isVisible());
  await page.locator('textarea').fill('Who are you?');
  await page.keyboard.press('Enter');
  const offlineMessage = messages('user').nth(1);
  await offlineMessage.waitFor();
  assert.equal(await offlineMessage.getAttribute('data-status'), 'pending');
  await shot('4-offline-pending');
  await browser.context.setOffline(false);
  await page.locator('.panel[data-connection="connected"]').waitFor({ timeout: 30_000 });
  await offlineMessage.and(page.locator('[data-status="complete"]')).waitFor({ timeout: 20_000 });
  assert.match(await lastReplyWhenComplete(3), /Ava/);
  assert.equal(await messages('user').count(), 2, 'sent exactly once');
  await shot('5-back-online');

  // An agent answers with HTML and a javascript: link through the platform API: shown as text, nothing runs.
  const demo = await ensureDemo({ ...server.ctx, channels: server.ctx.webchat.channels });
  const conversationId = await page.evaluate(
    (key) => localStorage.getItem(key),
    `parley:${demo.companyId}:conversation:${demo.channelId}`,
  );
  assert.ok(conversationId);
  const client = await createTestClient(server.ctx, ['conversations:write'], demo.companyId);
  const token = await fetchToken(server, client);
  // Every element added to or removed from an agent message is recorded with the message's key: markup of the text
  // that became an element only for a moment is caught too, and the window.__xss hook counts each
  // assignment the hostile handlers would make (an onerror or script can only run from an element).
  await page.evaluate(() => {
    const shadow = document.querySelector('[data-parley-widget]')!.shadowRoot!;
    const drawn: Array<{ key: string; tag: string }> = [];
    const xss: unknown[] = [];
    const w = window as unknown as { __drawn: typeof drawn; __xssCalls: unknown[] };
    w.__drawn = drawn;
    w.__xssCalls = xss;
    Object.defineProperty(window, '__xss', {
      configurable: true,
      get() {
        return xss.at(-1);
      },
      set(value: unknown) {
        xss.push(value);
      },
    });
    // No named functions in here: the test build's esbuild names them through a helper the page does not have.
    new MutationObserver((records) => {
      for (const r of records)
        for (const node of [...r.addedNodes, ...r.removedNodes]) {
          if (!(node instanceof Element)) continue;
          const message = node.matches('.msg.agent') ? node : (r.target as Element).closest('.msg.agent');
          if (!(message instanceof HTMLElement)) continue;
          for (const element of [node, ...node.querySelectorAll('*')])
            drawn.push({ key: message.dataset.key ?? '', tag: element.localName });
        }
    }).observe(shadow, { childList: true, subtree: true });
  });
  const postAsAgent = async (content: string) => {
    const posted = await fetch(`${server.baseUrl}/platform/v1/conversations/${conversationId}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ blocks: [{ type: 'markdown', content }], author: { name: 'Mallory' } }),
    });
    assert.equal(posted.status, 201);
  };
  const hostile =
    '<img src=x onerror="window.__xss=1"> <script>window.__xss=2</script> [click](javascript:window.__xss=3)';
  await postAsAgent(hostile);
  const agentMessage = messages('agent').first();
  await agentMessage.and(page.locator('[data-status="complete"]')).waitFor({ timeout: 20_000 });
  assert.equal(await agentMessage.locator('.body').textContent(), hostile.replace(/\s+$/, ''));
  assert.equal(
    await agentMessage.locator('img, script, a').count(),
    0,
    'no element came from the message text',
  );
  // A later message is the point after which the hostile one has been drawn in full; its bold word is the
  // recorder's control (markdown that may become an element is seen as one).
  await postAsAgent('That was **all**.');
  const later = messages('agent').nth(1);
  await later.locator('strong').waitFor({ timeout: 20_000 });
  const [hostileKey, laterKey] = [
    await agentMessage.getAttribute('data-key'),
    await later.getAttribute('data-key'),
  ];
  const { drawn, xssCalls } = await page.evaluate(() => {
    const w = window as unknown as { __drawn: Array<{ key: string; tag: string }>; __xssCalls: unknown[] };
    return { drawn: w.__drawn, xssCalls: w.__xssCalls };
  });
  assert.ok(
    drawn.some((d) => d.key === laterKey && d.tag === 'strong'),
    `the recorder sees elements drawn in a message body (${JSON.stringify(drawn)})`,
  );
  assert.deepEqual(
    drawn.filter((d) => d.key === hostileKey && ['img', 'script', 'a'].includes(d.tag)),
    [],
    'no element of the hostile text was ever drawn, not even for a moment',
  );
  assert.equal(await agentMessage.locator('img, script, a').count(), 0, 'still none');
  assert.deepEqual(xssCalls, [], 'no handler of the hostile text ran');
  await shot('6-hostile-markup-inert');

  // Earlier conversations: start a new one, then go back to this one through the list.
  const earlier = await page.locator('.msg .body').allTextContents();
  await page.getByRole('button', { name: 'New conversation' }).click();
  await page.waitForFunction(
    () =>
      document.querySelector('[data-parley-widget]')?.shadowRoot?.querySelectorAll('.msg.user').length === 0,
  );
  await lastReplyWhenComplete(1);
  assert.equal(
    await page.locator('.msg[data-status]').count(),
    1,
    'a new conversation holds only the greeting',
  );
  await page.getByRole('button', { name: 'Earlier conversations' }).click();
  const entries = page.locator('.conversations button');
  await entries.first().waitFor();
  assert.equal(await entries.count(), 2);
  assert.ok(await page.locator('.log').isHidden(), 'the list replaces the messages while open');
  await shot('7-conversation-list');
  await page.locator('.conversations button:not([aria-current="true"])').click();
  await page.waitForFunction(
    () =>
      document.querySelector('[data-parley-widget]')?.shadowRoot?.querySelectorAll('.msg.user').length === 2,
  );
  assert.deepEqual(await page.locator('.msg .body').allTextContents(), earlier);

  // A send the server refuses (too long) is shown as not sent, with a Retry button; it is never dropped silently.
  await page.locator('textarea').fill('x'.repeat(server.config.webchat.maxMessageBytes + 1));
  await page.keyboard.press('Enter');
  const failed = page.locator('.msg.user.failed');
  await failed.waitFor({ timeout: 15_000 });
  assert.equal(await failed.getAttribute('data-status'), 'failed');
  // The retry is proven by the message's status leaving "failed" and coming back to it after the server refused it
  // again: each data-status change of that message is recorded in the page as it happens (a MutationObserver's
  // oldValue keeps a "pending" that lasted less than a round trip from here), since waiting for "failed" alone
  // would pass at once.
  const failedKey = await failed.getAttribute('data-key');
  assert.ok(failedKey);
  const usersBeforeRetry = await messages('user').count();
  await page.evaluate((key) => {
    const shadow = document.querySelector('[data-parley-widget]')!.shadowRoot!;
    const statuses: string[] = [];
    (window as unknown as { __retryStatuses: string[] }).__retryStatuses = statuses;
    new MutationObserver((records) => {
      for (const r of records) {
        const target = r.target as HTMLElement;
        if (target.dataset.key === key && r.oldValue && statuses.at(-1) !== r.oldValue)
          statuses.push(r.oldValue);
      }
    }).observe(shadow, {
      attributes: true,
      attributeFilter: ['data-status'],
      attributeOldValue: true,
      subtree: true,
    });
  }, failedKey);
  await failed.getByRole('button', { name: 'Retry' }).click();
  const history = await page.waitForFunction(
    (key) => {
      const el = document
        .querySelector('[data-parley-widget]')
        ?.shadowRoot?.querySelector<HTMLElement>(`.msg.user[data-key="${CSS.escape(key)}"]`);
      const seen = [...(window as unknown as { __retryStatuses: string[] }).__retryStatuses];
      if (el?.dataset.status && seen.at(-1) !== el.dataset.status) seen.push(el.dataset.status);
      return seen.length >= 3 && seen.at(-1) === 'failed' ? seen : false;
    },
    failedKey,
    { timeout: 15_000 },
  );
  const statuses = (await history.jsonValue()) as string[];
  assert.equal(statuses[0], 'failed', `${statuses}`);
  assert.ok(statuses.slice(1, -1).includes('pending'), `sent again, then refused again: ${statuses}`);
  assert.equal(await messages('user').count(), usersBeforeRetry, 'neither dropped nor shown twice');
  assert.equal(await failed.getAttribute('data-key'), failedKey, 'the same message, failed again');
  assert.equal(
    (await failed.locator('.body').textContent())?.length,
    server.config.webchat.maxMessageBytes + 1,
    'its text kept for another try',
  );
  await shot('8-failed-send');

  // Escape closes the panel and returns focus to the launcher.
  await page.locator('textarea').focus();
  await page.keyboard.press('Escape');
  await page.locator('.panel').waitFor({ state: 'hidden' });
  assert.equal(await focusedInWidget(), 'launcher');
});
