import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { screenshot, type TestBrowser } from '@parley/testing/portal/browser';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';
import {
  type ConnectedVisitor,
  connectVisitor,
  createConversation,
  digitalEmployeeCompletes,
  newVisitor,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';

// A cited answer in the agent inbox (docs/knowledge.md "Cited answers"): the company's builtin digital employee answered
// from knowledge, and the transcript shows the sources under the answer, the http(s) one as a safe link.
describe('portal in a browser: sources of an answer in the inbox', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let guest: ConnectedVisitor;
  let conversation: { id: string; channel: string };
  before(async () => {
    ({ server, browser } = await startPortalPage({
      users: { 'kim@acme.test': 'agent' },
      signInAs: 'kim@acme.test',
      seed: async (server, companyId) => {
        await server.ctx.knowledge.create(
          companyId,
          {
            kind: 'text',
            title: 'Opening hours',
            url: 'https://help.example/hours',
            content:
              '# Opening hours\n\nThe roastery shop opens at nine on weekdays and at ten on Saturdays.',
          },
          { actor: 'test' },
        );
        const v = newVisitor(companyId);
        conversation = await createConversation(server, v);
        guest = await connectVisitor(server, v, conversation);
        await sendMessage(guest.sub, 'When does the roastery shop open on Saturdays?');
        await guest.log.waitFor((e) => digitalEmployeeCompletes(e).length > 0);
      },
    }));
  });
  after(async () => {
    guest?.close();
    await closePortalPage({ server, browser });
  });

  it('shows the sources under the digital employee’s answer', async () => {
    const { page } = browser;
    await page.locator(`a.conversation[data-id="${conversation.id}"]`).click();
    const sources = page.locator('.message.digital_employee .sources');
    await sources.waitFor();
    const link = sources.locator('a');
    assert.equal(await link.textContent(), 'Opening hours');
    assert.equal(await link.getAttribute('href'), 'https://help.example/hours');
    assert.equal(await link.getAttribute('rel'), 'noopener noreferrer');
    assert.match((await sources.textContent()) ?? '', /ten on Saturdays/);
    await screenshot(page, 'inbox-sources');
  });
});
