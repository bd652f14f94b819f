import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestServer } from '../../../server/src/testing/test-server.ts';
import type { MessageEnvelope } from '../../../server/src/webchat/messages/message.ts';
import {
  type ConnectedVisitor,
  connectVisitor,
  createConversation,
  sendMessage,
  slowEmployee,
  visitor,
} from '../../../server/src/webchat/testing/webchat-fixtures.ts';
import { screenshot, type TestBrowser } from '../testing/browser.ts';
import { closePortalPage, openPortalPage } from '../testing/portal-page.ts';

const text = (e: MessageEnvelope) =>
  e.message_snapshot.blocks.map((b) => ('content' in b ? b.content : '')).join('');

describe('portal in a browser: agent inbox', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let guest: ConnectedVisitor;
  let conversation: { id: string; channel: string };
  before(async () => {
    ({ server, browser } = await openPortalPage({
      server: { config: { webchat: { streamFlushIntervalMs: 0 } } },
      users: { 'kim@acme.test': 'agent' },
      signInAs: 'kim@acme.test',
      seed: async (server, companyId) => {
        // A digital employee that streams 12 words, one every 120 ms: long enough to watch the reply grow.
        const slow = await slowEmployee(server, companyId, { words: 12, delayMs: 120 });
        await server.ctx.digitalEmployees.setDefault(companyId, slow.id);
        const v = visitor(companyId);
        conversation = await createConversation(server, v);
        guest = await connectVisitor(server, v, conversation);
      },
    }));
  });
  after(async () => {
    guest?.close();
    await closePortalPage({ server, browser });
  });

  it('lands an agent in the inbox (no settings), shows the conversation and streams the reply live', async () => {
    const { page } = browser;
    await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'API clients' }).count(), 0);
    await page.locator(`button.conversation[data-id="${conversation.id}"]`).click();
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
    await guest.log.until(
      (es) => es.some((e) => e.message_snapshot.role === 'agent' && text(e) === 'Hi, this is Kim.'),
      15_000,
      'agent reply at the visitor',
    );
    // The form clears when the POST answers, which may come after the realtime broadcast has already arrived.
    const reply = page.getByLabel('Reply as agent');
    for (let i = 0; i < 100 && (await reply.inputValue()) !== ''; i++) await page.waitForTimeout(50);
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
});
