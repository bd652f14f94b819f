import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { http } from '@parley/testing/http-client';
import { screenshot, type TestBrowser } from '@parley/testing/portal/browser';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';
import {
  bearer,
  type ConnectedVisitor,
  connectVisitor,
  createConversation,
  fetchPlatformToken,
  newVisitor,
} from '@parley/testing/webchat/webchat-fixtures';

// Interactive blocks in the agent inbox (docs/design.md "Interactive blocks"): an agent offers quick replies from the
// reply form, the visitor taps one (a postback over the official centrifuge client), and the transcript shows the
// offer, the choice and a card posted through the platform API.
describe('portal in a browser: quick replies and cards in the inbox', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let companyId: string;
  let guest: ConnectedVisitor;
  let conversation: { id: string; channel: string };
  before(async () => {
    ({ server, browser, companyId } = await startPortalPage({
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

  it('sends quick replies from the reply form and shows the visitor’s choice and cards', async () => {
    const { page } = browser;
    await page.locator(`a.conversation[data-id="${conversation.id}"]`).click();
    await page.locator('.transcript-pane[data-live="true"]').waitFor();

    await page.getByLabel('Reply as agent').fill('Which size do you need?');
    // Quick replies are chips: type a label, Enter adds it (blank input adds nothing).
    for (const label of ['Size 41', '', 'Size 42']) {
      await page.getByLabel('Add a quick reply').fill(label);
      await page.getByLabel('Add a quick reply').press('Enter');
    }
    await page.getByRole('list', { name: 'Quick replies' }).getByRole('listitem').nth(1).waitFor();
    await page.getByRole('button', { name: 'Send reply' }).click();
    const offer = page.locator('.message.agent').filter({ hasText: 'Which size do you need?' });
    await offer.locator('.quick-replies').filter({ hasText: 'Quick replies: Size 41 · Size 42' }).waitFor();

    const [offered] = await guest.log.waitFor((es) =>
      es.some((e) => e.message_snapshot.role === 'agent' && e.message_snapshot.blocks.length === 2),
    );
    const blocks = guest.log.envelopes.find((e) => e.message_snapshot.role === 'agent')!.message_snapshot
      .blocks;
    assert.ok(offered);
    assert.deepEqual(
      blocks.map(({ id: _, ...b }) => b),
      [
        { type: 'markdown', content: 'Which size do you need?' },
        {
          type: 'quick_replies',
          options: [
            { id: 'option-1', label: 'Size 41' },
            { id: 'option-2', label: 'Size 42' },
          ],
        },
      ],
    );

    await guest.sub.publish({
      version: 1,
      client_message_id: randomUUID(),
      blocks: [{ type: 'postback', option_id: 'option-2', label: 'Size 42' }],
    });
    await page.locator('.message.user .postback').filter({ hasText: 'Chose: Size 42' }).waitFor();

    const token = await fetchPlatformToken(server, companyId, ['conversations:write']);
    const posted = await http(
      `${server.baseUrl}/platform/v1/conversations/${conversation.id}/messages`,
      bearer(token, {
        blocks: [
          {
            type: 'card',
            title: 'Blue runners',
            text: 'Size 42',
            buttons: [
              { id: 'buy', label: 'Buy' },
              { id: 'more', label: 'More', url: 'https://shop.example/r' },
            ],
          },
        ],
      }),
    );
    assert.equal(posted.status, 201, posted.text);
    await page
      .locator('.message.agent .card')
      .filter({ hasText: 'Card: Blue runners — Size 42 [Buy · More ↗ https://shop.example/r]' })
      .waitFor();
    await screenshot(page, 'inbox-interactive');
  });

  it('takes at most 10 quick replies as chips and removes one with its × button', async () => {
    const { page } = browser;
    const add = page.getByLabel('Add a quick reply');
    for (let i = 0; i < 10; i++) {
      await add.fill(`Option ${i}`);
      await add.press('Enter');
    }
    const chips = page.getByRole('list', { name: 'Quick replies' }).getByRole('listitem');
    assert.equal(await chips.count(), 10);
    assert.equal(await add.isDisabled(), true, 'an 11th cannot be typed');
    await page.getByRole('button', { name: 'Remove quick reply Option 3' }).click();
    assert.equal(await chips.count(), 9);
    assert.equal(await add.isDisabled(), false);
  });
});
