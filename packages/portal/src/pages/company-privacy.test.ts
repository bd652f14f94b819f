import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { TestBrowser } from '@parley/testing/portal/browser';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';

// Settings → Company → Privacy: the export of a visitor's data downloads the JSON document (docs/privacy.md "Export");
// an erasure asks for confirmation first and shows its receipt (docs/privacy.md "Erase").
describe('portal in a browser: company privacy export and erasure', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let companyId: string;
  before(async () => {
    ({ server, browser, companyId } = await startPortalPage({ section: 'Company' }));
  });
  after(() => closePortalPage({ server, browser }));

  it('downloads the export of a conversation as a JSON file', async () => {
    const canary = `canary-${randomUUID()}`;
    const employee = await server.ctx.webchat.conversations.defaultDigitalEmployee(companyId);
    const conversation = await server.ctx.webchat.conversations.create(
      { companyId, sessionId: randomUUID() },
      employee.id,
    );
    await server.ctx.webchat.store.insert({
      conversationId: conversation.id,
      role: 'user',
      author: null,
      status: 'complete',
      blocks: [{ id: randomUUID(), type: 'markdown', content: `my order ${canary}` }],
    });
    const { page } = browser;
    const exporter = page.getByRole('region', { name: /Export a visitor/ });
    await exporter.getByLabel('Export by').selectOption('conversation_id');
    await exporter.getByLabel('Value').fill(conversation.id);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      exporter.getByRole('button', { name: 'Download export' }).click(),
    ]);
    assert.match(download.suggestedFilename(), /^visitor-export-\d{4}-\d{2}-\d{2}\.json$/);
    const file = await download.path();
    const document = JSON.parse(await readFile(file, 'utf8'));
    assert.equal(document.conversations.length, 1);
    assert.equal(document.conversations[0].id, conversation.id);
    assert.ok(JSON.stringify(document.conversations[0].messages).includes(canary));
    await page.getByText('Exported 1 conversation(s).').waitFor();
  });

  it('erases a conversation only once the confirmation is accepted, and shows the receipt', async () => {
    const employee = await server.ctx.webchat.conversations.defaultDigitalEmployee(companyId);
    const conversation = await server.ctx.webchat.conversations.create(
      { companyId, sessionId: randomUUID() },
      employee.id,
    );
    for (const content of ['my address is 1 Main St', 'and my phone 555-0100'])
      await server.ctx.webchat.store.insert({
        conversationId: conversation.id,
        role: 'user',
        author: null,
        status: 'complete',
        blocks: [{ id: randomUUID(), type: 'markdown', content }],
      });
    const stored = async () =>
      (
        await server.ctx.store.db
          .selectFrom('conversations')
          .select('id')
          .where('id', '=', conversation.id)
          .execute()
      ).length;
    const { page } = browser;
    const eraser = page.getByRole('region', { name: 'Erase a visitor' });
    const fill = async () => {
      await eraser.getByLabel('Erase by').selectOption('conversation_id');
      await eraser.getByLabel('Value').fill(conversation.id);
      await eraser.getByRole('button', { name: 'Erase…' }).click();
    };
    await fill();
    const dialog = page.getByRole('dialog', { name: 'Erase this visitor’s data?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal(await stored(), 1, 'nothing is erased without the confirmation');

    await eraser.getByLabel('Value').fill('');
    await fill();
    await dialog.getByRole('button', { name: 'Erase' }).click();
    await page
      .getByText(/^Erased 1 conversation\(s\), 2 message\(s\), 0 file\(s\)\. Receipt [0-9a-f-]{36}\.$/)
      .waitFor();
    assert.equal(await stored(), 0);
  });
});
