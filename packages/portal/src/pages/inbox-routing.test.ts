import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { screenshot, type TestBrowser } from '@parley/testing/portal/browser';
import { signInClient } from '@parley/testing/portal/portal-fixtures';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  type ConnectedVisitor,
  connectVisitor,
  createConversation,
  newVisitor,
  sdkPost,
  sendMessage,
  type Visitor,
} from '@parley/testing/webchat/webchat-fixtures';

/**
 * The live inbox in Chromium (docs/routing.md): the list is pushed (no polling), a visitor asking for a person is
 * queued and notified (browser notification and tab title), round-robin spreads conversations over two available
 * agents, `/` inserts a canned response, search finds a message. Screenshots in test-artifacts/portal/.
 */
describe('portal in a browser: live inbox, routing, notifications, canned responses, search', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let companyId: string;
  const guests: ConnectedVisitor[] = [];
  before(async () => {
    ({ server, browser, companyId } = await startPortalPage({
      server: { config: { webchat: { streamFlushIntervalMs: 0 } } },
      users: { 'kim@acme.test': 'admin', 'ann@acme.test': 'agent' },
      signInAs: 'kim@acme.test',
      seed: async (server, companyId) => {
        await server.ctx.webchat.cannedResponses.create(companyId, {
          shortcut: 'refund',
          title: 'Refund policy',
          content: 'You get a **full refund** within 30 days.',
        });
      },
    }));
    const { page, context } = browser;
    await context.grantPermissions(['notifications'], { origin: server.baseUrl });
    // Records every notification the page shows (the real constructor still runs).
    // A string, not a function: the test runner's transform would add helpers the page does not have.
    await page.addInitScript(`
      const Real = window.Notification;
      window.__notes = [];
      class Recording extends Real {
        constructor(title, options) {
          super(title, options);
          window.__notes.push({ title, body: options && options.body });
        }
      }
      // Static members read through the real constructor (an inherited accessor would be an illegal invocation).
      Object.defineProperty(Recording, 'permission', { get: () => Real.permission });
      Object.defineProperty(Recording, 'requestPermission', { value: () => Real.requestPermission() });
      window.Notification = Recording;
    `);
    page.on('pageerror', (err) => console.error('page error:', err.message));
    await page.goto('/portal/inbox');
    await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    await page.locator('main[data-inbox-live="true"], [data-inbox-live="true"]').first().waitFor();
  });
  after(async () => {
    for (const g of guests) g.close();
    await closePortalPage({ server, browser });
  });

  const entry = (id: string) => browser.page.locator(`.conversation-list li[data-id="${id}"]`);
  const startVisitor = async (): Promise<{ v: Visitor; id: string; guest: ConnectedVisitor }> => {
    const v = newVisitor(companyId);
    const conversation = await createConversation(server, v);
    const guest = await connectVisitor(server, v, conversation);
    guests.push(guest);
    return { v, id: conversation.id, guest };
  };

  it('updates the list live when a visitor starts a conversation and writes', async () => {
    const { page } = browser;
    const { id, guest } = await startVisitor();
    await entry(id).waitFor();
    assert.equal(await entry(id).locator('.visitor').textContent(), 'Anonymous visitor');
    assert.doesNotMatch((await entry(id).textContent()) ?? '', /#[0-9a-f]{8}/, 'no raw id as the label');
    await sendMessage(guest.sub, 'Hello, is **anyone** there?');
    await entry(id).locator('.preview').filter({ hasText: 'Hello, is anyone there?' }).waitFor();
    await entry(id).locator('.badge.handler', { hasText: 'bot' }).waitFor();
    await screenshot(page, 'inbox-live-list');
  });

  it('queues a request for a person and notifies the agent (notification and tab title)', async () => {
    const { page } = browser;
    const { v, id } = await startVisitor();
    await entry(id).waitFor();
    const asked = await sdkPost(server, v, `/conversations/${id}/request-human`);
    assert.equal(asked.status, 200);
    await entry(id).locator('.badge.handler', { hasText: 'queued' }).waitFor();
    await page.waitForFunction(() =>
      (window as unknown as { __notes: Array<{ title: string }> }).__notes.some(
        (n) => n.title === 'A visitor is waiting',
      ),
    );
    assert.match(await page.title(), /^\(\d+\) /);
    await page.getByRole('group', { name: 'View' }).getByRole('button', { name: 'Queued' }).click();
    await entry(id).waitFor();
    await screenshot(page, 'inbox-queue');
    // One ownership action: the queued conversation is still the digital employee's, so "Take over" (no "Take").
    await entry(id).locator('a.conversation').click();
    await page.getByRole('button', { name: 'Take over' }).click();
    await page.getByText('Handled by an agent (kim).').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Take', exact: true }).count(), 0);
    await page.getByRole('group', { name: 'View' }).getByRole('button', { name: 'All' }).click();
  });

  it('assigns round-robin across two available agents and shows admins their availability', async () => {
    const { page } = browser;
    const ann = await signInClient(server, 'ann@acme.test');
    assert.equal((await ann.put('/inbox/availability', { availability: 'available' })).status, 200);
    await page.getByRole('button', { name: /Away — click to become available/ }).click();
    await page.getByRole('button', { name: /Available — click to go away/ }).waitFor();
    await page.locator('.agents li[data-agent="ann"]', { hasText: 'available' }).waitFor();

    const first = await startVisitor();
    const second = await startVisitor();
    for (const c of [first, second]) await sdkPost(server, c.v, `/conversations/${c.id}/request-human`);
    const handlers = async () =>
      Promise.all(
        [first, second].map(async (c) => (await entry(c.id).locator('.badge.handler').textContent())?.trim()),
      );
    // Each entry's badge changes when its assignment is pushed: waited for until both are assigned (bounded in
    // time, not in a count of polls that a loaded machine's slow reads would use up).
    const assigned = await waitFor(
      'both conversations assigned',
      async () => {
        const now = await handlers();
        return now.every((h) => h === 'kim' || h === 'ann') && now;
      },
      30_000,
    );
    assert.deepEqual(assigned.sort(), ['ann', 'kim'], 'one each');
    await page.locator('.agents li[data-agent="kim"]', { hasText: 'available' }).waitFor();
    await screenshot(page, 'inbox-round-robin');
    await page.getByRole('button', { name: /Available — click to go away/ }).click();
  });

  it('inserts a canned response with / (filtered menu, keyboard) and renders the markdown', async () => {
    const { page } = browser;
    const { id } = await startVisitor();
    await entry(id).locator('a.conversation').click();
    await page.locator('.transcript-pane[data-live="true"]').waitFor();
    const box = page.getByLabel('Reply as agent');
    await box.click();
    await box.pressSequentially('Sure! /ref');
    const menu = page.getByRole('listbox', { name: 'Canned responses' });
    await menu.getByRole('option', { name: /\/refund Refund policy/ }).waitFor();
    await screenshot(page, 'inbox-canned-menu');
    await page.keyboard.press('Enter');
    assert.equal(await box.inputValue(), 'Sure! You get a **full refund** within 30 days.');
    assert.equal(await menu.isHidden(), true);
    await page.getByRole('button', { name: 'Send reply' }).click();
    const sent = page.locator('.message.agent').filter({ hasText: 'full refund' });
    await sent.waitFor();
    assert.equal(await sent.locator('strong').textContent(), 'full refund', 'markdown rendered, not raw');
  });

  it('finds a message with search', async () => {
    const { page } = browser;
    const { id, guest } = await startVisitor();
    const word = `zebra${randomUUID().slice(0, 6)}`;
    await sendMessage(guest.sub, `My order number is ${word}, please check`);
    await entry(id).locator('.preview').filter({ hasText: word }).waitFor();
    await page.getByLabel('Search').fill(word.slice(0, 8));
    const hit = page.locator('.conversation-list li[data-id]');
    await hit.locator('.match').filter({ hasText: word }).waitFor();
    assert.deepEqual(await hit.evaluateAll((els) => els.map((e) => e.getAttribute('data-id'))), [id]);
    await screenshot(page, 'inbox-search');
    await page.getByLabel('Search').fill('');
  });
});
