import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { MessageEnvelope } from '@parley/server/internal/webchat/messages/message';
import { screenshot, type TestBrowser } from '@parley/testing/portal/browser';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';
import {
  type ConnectedVisitor,
  connectToNewConversation,
  connectVisitor,
  createConversation,
  createSlowEmployee,
  newVisitor,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';

const text = (e: MessageEnvelope) =>
  e.message_snapshot.blocks.map((b) => ('content' in b ? b.content : '')).join('');

describe('portal in a browser: agent inbox', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let guest: ConnectedVisitor;
  let conversation: { id: string; channel: string };
  /** A second visitor's conversation, for switching between conversations. */
  let other: { conversation: { id: string; channel: string }; c: ConnectedVisitor };
  before(async () => {
    ({ server, browser } = await startPortalPage({
      server: { config: { webchat: { streamFlushIntervalMs: 0 } } },
      users: { 'kim@acme.test': 'agent' },
      signInAs: 'kim@acme.test',
      seed: async (server, companyId) => {
        // A digital employee that streams 12 words, one every 120 ms: long enough to watch the reply grow.
        const slow = await createSlowEmployee(server, companyId, { words: 12, delayMs: 120 });
        await server.ctx.digitalEmployees.setDefault(companyId, slow.id);
        const v = newVisitor(companyId);
        conversation = await createConversation(server, v);
        guest = await connectVisitor(server, v, conversation);
        other = await connectToNewConversation(server, newVisitor(companyId));
      },
    }));
  });
  after(async () => {
    guest?.close();
    other?.c.close();
    await closePortalPage({ server, browser });
  });

  it('lands an agent in the inbox (no settings), shows the conversation and streams the reply live', async () => {
    const { page } = browser;
    await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'API clients' }).count(), 0);
    await page.locator(`a.conversation[data-id="${conversation.id}"]`).click();
    await page.locator('.transcript-pane[data-live="true"]').waitFor();
    await page.getByText('Handled by the digital employee.').waitFor();

    await sendMessage(guest.sub, 'hello from the visitor');
    await page.locator('.message.user').filter({ hasText: 'hello from the visitor' }).waitFor();
    // The reply appears while it is still streaming, then completes with all its words.
    await page.locator('.message.digital_employee[data-status="partial"]').first().waitFor();
    await screenshot(page, 'inbox-streaming');
    const done = page
      .locator('.message.digital_employee[data-status="complete"]')
      .filter({ hasText: 'word12' });
    await done.waitFor({ timeout: 20_000 });
    assert.match((await done.textContent())!, /word1 word2 .* word12/);
  });

  it('takes over, replies as the agent (the visitor receives it) and hands back', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: 'Take over' }).click();
    await page.getByText('Handled by an agent (kim).').waitFor();
    await page.locator('.message.system').first().waitFor();

    await page.getByLabel('Reply as agent').fill('Hi, this is Kim.');
    await page.getByRole('button', { name: 'Send reply' }).click();
    await page.locator('.message.agent').filter({ hasText: 'Hi, this is Kim.' }).waitFor();
    await guest.log.waitFor(
      (es) => es.some((e) => e.message_snapshot.role === 'agent' && text(e) === 'Hi, this is Kim.'),
      15_000,
      'agent reply at the visitor',
    );
    // The form clears when the POST answers, which may come after the realtime broadcast has already arrived.
    const reply = page.getByLabel('Reply as agent');
    await page.waitForFunction(
      (field) => (field as HTMLTextAreaElement).value === '',
      await reply.elementHandle(),
      {
        timeout: 30_000,
      },
    );
    assert.equal(await reply.inputValue(), '', 'the form is cleared after sending');

    await page.getByRole('button', { name: 'Send reply' }).click();
    await page.getByText('This field is required.').waitFor();

    await page.getByRole('button', { name: 'Hand back' }).click();
    await page.getByText('Handled by the digital employee.').waitFor();
    await screenshot(page, 'inbox');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'inbox-phone');
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    assert.ok(overflow <= 0, `no horizontal scrolling at phone width (overflow ${overflow}px)`);
  });

  it('switching conversation is live again only once the new one is subscribed', async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 1280, height: 800 });
    const pane = page.locator('.transcript-pane');
    const livePane = page.locator('.transcript-pane[data-live="true"]');
    await livePane.waitFor();
    // Hold the second conversation's realtime grant: until it is answered, that transcript cannot be live.
    const grantPath = `/portal/api/inbox/conversations/${other.conversation.id}/realtime`;
    const isGrant = (url: URL) => url.pathname === grantPath;
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(isGrant, async (route) => {
      await held;
      await route.continue();
    });
    try {
      await page.locator(`a.conversation[data-id="${other.conversation.id}"]`).click();
      await page.locator('.conv-title', { hasText: `#${other.conversation.id.slice(0, 8)}` }).waitFor();
      assert.equal(await pane.getAttribute('data-live'), null, 'not live before its subscription');
    } finally {
      release();
    }
    await livePane.waitFor();
    // Only now: removing the route while the held request is pending lets it through and our continue fails.
    await page.unroute(isGrant);
    await sendMessage(other.c.sub, 'hello on the second line');
    await page.locator('.message.user').filter({ hasText: 'hello on the second line' }).waitFor();
    // Let the reply finish streaming, so no turn is still running when the server stops.
    await page
      .locator('.message.digital_employee[data-status="complete"]')
      .filter({ hasText: 'word12' })
      .waitFor({ timeout: 20_000 });
  });

  it('shows why a conversation could not be loaded', async () => {
    const { page } = browser;
    // The conversation vanishes between listing and reading: ask the real server for an id it does not know.
    const readPath = `/portal/api/inbox/conversations/${conversation.id}`;
    const gone = (url: URL) => url.pathname === readPath;
    await page.route(gone, (route) =>
      route.continue({ url: route.request().url().replace(conversation.id, randomUUID()) }),
    );
    try {
      await page.locator(`a.conversation[data-id="${conversation.id}"]`).click();
      await page
        .locator('.transcript-pane')
        .getByRole('alert')
        .filter({ hasText: 'No such conversation.' })
        .waitFor();
      assert.equal(await page.locator('.transcript-pane .transcript').count(), 0, 'no stale transcript');
      assert.equal(await page.locator('.transcript-pane').getAttribute('data-live'), null);
    } finally {
      await page.unroute(gone);
    }
  });
});
