import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { http } from '@parley/testing/http-client';
import { screenshot, type TestBrowser, waitForClipboard } from '@parley/testing/portal/browser';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  configureIdentity,
  newIdentifiedVisitor,
  signVisitorToken,
} from '@parley/testing/webchat/identity-fixtures';
import {
  type ConnectedVisitor,
  connectVisitor,
  createConversation,
  listMessages,
  sendMessage,
  type Visitor,
} from '@parley/testing/webchat/webchat-fixtures';

describe('portal in a browser: visitor identity, unread counts and ratings', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let companyId: string;
  let visitor: Visitor;
  let guest: ConnectedVisitor;
  let conversation: { id: string; channel: string };
  before(async () => {
    ({ server, browser, companyId } = await startPortalPage({
      section: 'Channels',
      seed: async (server, companyId) => {
        // A channel with identity on and a verified visitor who rated the greeting and wrote once.
        const employee = await server.ctx.digitalEmployees.getDefault(companyId);
        const channel = await server.ctx.webchat.channels.create({
          companyId,
          name: 'Help center',
          digitalEmployeeId: employee.id,
        });
        const { identity_secret } = await configureIdentity(server, companyId, channel.id, 'optional');
        visitor = newIdentifiedVisitor(
          companyId,
          channel.id,
          await signVisitorToken(identity_secret!, 'crm-77', {
            claims: { name: 'Grace Hopper', email: 'grace@example.com' },
          }),
        );
        conversation = await createConversation(server, visitor);
        const greeting = (await listMessages(server, visitor, conversation.id)).body.messages[0];
        await http(
          `${server.baseUrl}/sdk/v1/conversations/${conversation.id}/messages/${greeting.id}/feedback`,
          {
            method: 'PUT',
            headers: { ...visitor.headers, 'content-type': 'application/json' },
            body: JSON.stringify({ rating: 'down', comment: 'Too generic' }),
          },
        );
        guest = await connectVisitor(server, visitor, conversation);
        await sendMessage(guest.sub, 'I need a human, please');
        await guest.log.waitFor((es) => es.some((e) => e.message_snapshot.role === 'user'));
      },
    }));
  });
  after(async () => {
    guest?.close();
    await closePortalPage({ server, browser });
  });

  it('turns a channel’s visitor identity on and shows its secret once, then rotates it', async () => {
    const { page } = browser;
    await page.getByRole('textbox', { name: 'Name' }).fill('Web shop');
    await page.getByRole('button', { name: 'Create channel' }).click();
    await page.getByText('Created channel “Web shop”.').waitFor();
    const row = page.getByRole('row').filter({ hasText: 'Web shop' });
    assert.equal(await row.locator('.badge.identity-off').textContent(), 'off');
    await row.getByRole('button', { name: 'Change visitor identity of Web shop' }).click();
    const dialog = page.getByRole('dialog', { name: 'Visitor identity of “Web shop”' });
    await dialog.getByRole('combobox', { name: 'Identity' }).selectOption('required');
    await dialog.getByRole('button', { name: 'Save' }).click();
    const secret = page.getByTestId('identity-secret');
    await secret.waitFor();
    const value = (await secret.textContent())!.trim();
    assert.match(value, /^pvi_[0-9A-Za-z]{43}$/);
    await page.getByRole('button', { name: 'Copy secret' }).click();
    await waitForClipboard(page, value);
    await row.locator('.badge.identity-required').waitFor();
    await screenshot(page, 'channels-identity-secret');

    // Shown once: gone after a reload; a rotation shows a new one.
    await page.reload();
    await page.getByRole('row').filter({ hasText: 'Web shop' }).waitFor();
    assert.equal(await page.getByTestId('identity-secret').count(), 0);
    await page
      .getByRole('row')
      .filter({ hasText: 'Web shop' })
      .getByRole('button', { name: 'Change visitor identity of Web shop' })
      .click();
    await page.getByLabel('Rotate the identity secret').check();
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('identity-secret').waitFor();
    assert.notEqual((await page.getByTestId('identity-secret').textContent())!.trim(), value);
  });

  it('shows agents who the visitor is, their unread messages, ratings, and marks the conversation read', async () => {
    const { page } = browser;
    await page.getByRole('link', { name: 'Inbox' }).click();
    const item = page.locator(`a.conversation[data-id="${conversation.id}"]`);
    await item.waitFor();
    assert.match((await item.textContent())!, /Grace Hopper/);
    assert.equal(await item.locator('.unread').textContent(), '1');
    await screenshot(page, 'inbox-visitor-unread');

    await item.click();
    const details = page.getByRole('definition').filter({ hasText: 'grace@example.com' });
    await details.waitFor();
    await page.getByText('Visitor found this not helpful: “Too generic”').waitFor();
    await item.locator('.unread').waitFor({ state: 'detached' });
    const marks = await waitFor('the agents’ read mark', async () => {
      const stored = await server.ctx.webchat.conversations.find(conversation.id);
      return stored!.agentReadPosition > 0 && stored;
    });
    assert.ok(marks.agentReadPosition >= 2);
    // The visitor's widget learns it live ("Seen").
    await waitFor('the read event', () => guest.readEvents.some((e) => e.reader === 'agent'));
    await screenshot(page, 'inbox-visitor-details');

    // Closing and the visitor's CSAT.
    await page.getByRole('button', { name: 'Take over' }).click();
    await page.getByText('Handled by an agent').waitFor();
    await server.ctx.webchat.commands.close(companyId, conversation.id, { id: 'test' });
    const rated = await http(`${server.baseUrl}/sdk/v1/conversations/${conversation.id}/csat`, {
      method: 'PUT',
      headers: { ...visitor.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ score: 5, comment: 'Grace was great' }),
    });
    assert.equal(rated.status, 200);
    // The list's status filter (the conversation pane has a Status control of its own).
    await page.locator('#inbox-status').selectOption('resolved');
    await page.locator(`a.conversation[data-id="${conversation.id}"]`).click();
    await page.getByRole('complementary', { name: 'Visitor' }).getByText('5/5 — “Grace was great”').waitFor();

    // Digital employees: how visitors rate each one.
    await page.getByRole('link', { name: 'Digital employees' }).click();
    const employeeRow = page.getByRole('row').filter({ hasText: 'Default' });
    await employeeRow.getByText('0% helpful (0 of 1)').waitFor();
    await employeeRow.getByText('CSAT 5.0 / 5 (1)').waitFor();
    await screenshot(page, 'digital-employees-ratings');
  });
});
