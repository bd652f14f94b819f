import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { http } from '../../../server/src/testing/http-client.ts';
import type { TestServer } from '../../../server/src/testing/test-server.ts';
import {
  bearer,
  type ConnectedVisitor,
  connectVisitor,
  createConversation,
  fetchPlatformToken,
  newVisitor,
} from '../../../server/src/testing/webchat/webchat-fixtures.ts';
import { screenshot, type TestBrowser } from '../testing/browser.ts';
import { closePortalPage, startPortalPage } from '../testing/portal-page.ts';

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
    await page.locator(`button.conversation[data-id="${conversation.id}"]`).click();
    await page.locator('.transcript-pane[data-live="true"]').waitFor();

    await page.getByLabel('Reply as agent').fill('Which size do you need?');
    await page.getByLabel('Quick replies (optional)').fill('Size 41\n\nSize 42\n');
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

  it('refuses more than 10 quick replies next to the field', async () => {
    const { page } = browser;
    await page.getByLabel('Reply as agent').fill('Pick one');
    await page
      .getByLabel('Quick replies (optional)')
      .fill(Array.from({ length: 11 }, (_, i) => `Option ${i}`).join('\n'));
    await page.getByRole('button', { name: 'Send reply' }).click();
    // validation_failed, shown next to the field it names.
    await page.getByText('Quick replies (optional) must NOT have more than 10 items.').waitFor();
    assert.equal(await page.locator('.message.agent').filter({ hasText: 'Pick one' }).count(), 0);
  });
});
