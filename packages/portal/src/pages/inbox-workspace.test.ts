import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MessageEnvelope } from '@parley/server/internal/webchat/messages/message';
import { RETURNS_ARTICLE } from '@parley/testing/knowledge/knowledge-fixtures';
import { screenshotFolder, type TestBrowser } from '@parley/testing/portal/browser';
import { signInClient } from '@parley/testing/portal/portal-fixtures';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';
import {
  type ConnectedVisitor,
  connectToNewConversation,
  createSlowEmployee,
  listMessages,
  newVisitor,
  sendMessage,
  type Visitor,
} from '@parley/testing/webchat/webchat-fixtures';
import type { Page } from 'playwright-core';
import { expectNoSeriousAxeViolations } from '../testing/axe.ts';

/** Screenshots to look at (outside the repository). */
const shot = screenshotFolder('inbox-workspace');
const text = (e: MessageEnvelope) =>
  e.message_snapshot.blocks.map((b) => ('content' in b ? b.content : '')).join('');
/** A 1×1 PNG, an image the attachment rules accept. */
const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

// The agent workspace of issue 23 as an agent spends a day in it: filters, a conversation opened from its URL,
// the unread separator, the composer (preview, draft, files by drop and paste, Enter / Shift+Enter), keyboard-only
// triage with the help dialog, and the phone layout; axe on every state.
describe('portal in a browser: the agent workspace', () => {
  let server: TestServer;
  let browser: TestBrowser;
  const visitors: Array<{
    conversation: { id: string; channel: string };
    c: ConnectedVisitor;
    visitor: Visitor;
  }> = [];
  const axeStates: string[] = [];
  let acmeId = '';
  const axe = async (page: Page, state: string) => {
    await expectNoSeriousAxeViolations(page, state);
    axeStates.push(state);
  };
  before(async () => {
    ({ server, browser } = await startPortalPage({
      server: { config: { webchat: { streamFlushIntervalMs: 0 } } },
      users: { 'kim@acme.test': 'agent', 'ann@acme.test': 'agent' },
      signInAs: 'kim@acme.test',
      seed: async (server, companyId) => {
        acmeId = companyId;
        // The company's knowledge, which suggested replies draw from.
        await server.ctx.knowledge.create(
          companyId,
          {
            kind: 'text',
            title: 'Returns and refunds',
            content: RETURNS_ARTICLE,
            url: 'https://help.example/returns',
          },
          { actor: 'test' },
        );
        const bot = await createSlowEmployee(server, companyId, { words: 3, delayMs: 5 });
        await server.ctx.digitalEmployees.setDefault(companyId, bot.id);
        for (let i = 0; i < 3; i++) {
          const visitor = newVisitor(companyId);
          visitors.push({ ...(await connectToNewConversation(server, visitor)), visitor });
        }
      },
    }));
    // Two visitor messages in the first conversation, unread by any agent.
    const first = visitors[0]!;
    await sendMessage(first.c.sub, 'My order #1042 has not arrived');
    await first.c.log.waitFor((es) =>
      es.some((e) => e.message_snapshot.role === 'digital_employee' && e.operation === 'complete'),
    );
    await sendMessage(first.c.sub, 'It was due on Monday');
  });
  after(async () => {
    for (const v of visitors) v.c.close();
    await closePortalPage({ server, browser });
  });

  it('lands on the inbox, first in the menu, with the unread conversation first and the views filtering', async () => {
    const { page } = browser;
    await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    const menu = page.getByRole('navigation', { name: 'Portal' }).getByRole('link');
    assert.equal(await menu.first().textContent(), 'Inbox');
    const entries = page.locator('.conversation-list a.conversation');
    await page.locator(`a.conversation[data-id="${visitors[0]!.conversation.id}"] .badge.unread`).waitFor();
    assert.equal(await entries.first().getAttribute('data-id'), visitors[0]!.conversation.id, 'unread first');
    assert.equal(await entries.count(), 3);
    await axe(page, 'list');
    await shot(page, '1-list');

    const views = page.getByRole('group', { name: 'View' });
    await views.getByRole('button', { name: 'Mine' }).click();
    await page.getByText('No conversations here.').waitFor();
    await views.getByRole('button', { name: 'Unassigned' }).click();
    await entries.nth(2).waitFor();
    await views.getByRole('button', { name: 'All' }).click();
    await entries.nth(2).waitFor();
  });

  it('opens a conversation from its URL at the newest message, with the unread separator and the visitor panel', async () => {
    const { page } = browser;
    const id = visitors[0]!.conversation.id;
    await page.goto(`/portal/inbox/${id}`);
    await page.locator('.transcript-pane[data-live="true"]').waitFor();
    assert.equal(new URL(page.url()).pathname, `/portal/inbox/${id}`);
    await page.locator('.transcript .unread-separator').filter({ hasText: 'New messages' }).waitFor();
    const separatorNext = page.locator('.unread-separator + .message');
    assert.match((await separatorNext.textContent()) ?? '', /My order #1042/);
    const panel = page.getByRole('complementary', { name: 'Visitor' });
    await panel.getByText('Anonymous (not verified)').waitFor();
    assert.equal(await page.getByRole('link', { name: 'Inbox' }).getAttribute('aria-current'), 'page');
    // Opened at the newest messages: the separator and what follows it are in view, not the top of the transcript.
    const inView = await page.locator('.transcript').evaluate((el) => {
      const box = el.getBoundingClientRect();
      const sep = el.querySelector('.unread-separator')!.getBoundingClientRect();
      return sep.top >= box.top - 1 && sep.bottom <= box.bottom + 1;
    });
    assert.ok(inView, 'the transcript opens where the unread messages start');
    await axe(page, 'conversation');
    await shot(page, '2-conversation');
  });

  it('composes: markdown preview, a draft kept across a reload, files by drop and paste, Shift+Enter and Enter', async () => {
    const { page } = browser;
    const id = visitors[0]!.conversation.id;
    const box = page.getByLabel('Reply as agent');
    await box.fill('Sorry about **order #1042**');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.locator('.composer-preview strong', { hasText: 'order #1042' }).waitFor();
    await axe(page, 'composer preview');
    await page.reload();
    await page.locator('.transcript-pane[data-live="true"]').waitFor();
    assert.equal(
      await page.getByLabel('Reply as agent').inputValue(),
      'Sorry about **order #1042**',
      'draft kept',
    );

    // A file dropped on the composer and one pasted into it (no named functions inside: the page gets this source).
    await page.evaluate((png) => {
      const bytes = Uint8Array.from(atob(png), (c) => c.charCodeAt(0));
      const dropped = new DataTransfer();
      dropped.items.add(new File([bytes], 'dropped.png', { type: 'image/png' }));
      document
        .querySelector('form.composer')!
        .dispatchEvent(new DragEvent('drop', { dataTransfer: dropped, bubbles: true, cancelable: true }));
      const pasted = new DataTransfer();
      pasted.items.add(new File([bytes], 'pasted.png', { type: 'image/png' }));
      document
        .querySelector('textarea.composer-box')!
        .dispatchEvent(
          new ClipboardEvent('paste', { clipboardData: pasted, bubbles: true, cancelable: true }),
        );
    }, PNG_BASE64);
    const pending = page.getByRole('list', { name: 'Files to send' });
    await pending.getByText('dropped.png').waitFor();
    await pending.getByText('pasted.png').waitFor();
    await shot(page, '3-composer-files');

    await box.focus();
    await box.press('End');
    await box.press('Shift+Enter');
    await box.pressSequentially('We are on it.');
    assert.equal(
      await box.inputValue(),
      'Sorry about **order #1042**\nWe are on it.',
      'Shift+Enter breaks the line',
    );
    await box.press('Enter');
    const sent = page.locator('.message.agent').filter({ hasText: 'We are on it.' });
    await sent.waitFor();
    assert.equal(await sent.locator('.attachment-thumb').count(), 2);
    await visitors[0]!.c.log.waitFor((es) =>
      es.some((e) => e.message_snapshot.role === 'agent' && text(e).includes('We are on it.')),
    );
    assert.equal(await box.inputValue(), '');
    await page.reload();
    await page.locator('.transcript-pane[data-live="true"]').waitFor();
    assert.equal(await page.getByLabel('Reply as agent').inputValue(), '', 'the draft went with the message');
    assert.equal(new URL(page.url()).pathname, `/portal/inbox/${id}`);
  });

  it('triages with the keyboard only: help, next, assign, reply, resolve', async () => {
    const { page } = browser;
    await page.goto('/portal/inbox');
    await page.locator('main[data-inbox-live="true"]').waitFor();
    await page.keyboard.press('?');
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await help.waitFor();
    await axe(page, 'help dialog');
    await shot(page, '4-help');
    await page.keyboard.press('Escape');
    await help.waitFor({ state: 'hidden' });

    await page.keyboard.press('j');
    const first = await page.locator('.conversation-list a.conversation').first().getAttribute('data-id');
    await page.waitForURL(`**/portal/inbox/${first}`);
    await page.keyboard.press('j');
    const second = await page.locator('.conversation-list a.conversation').nth(1).getAttribute('data-id');
    await page.waitForURL(`**/portal/inbox/${second}`);
    await page.locator('.transcript-pane[data-live="true"]').waitFor();
    await page.keyboard.press('k');
    await page.waitForURL(`**/portal/inbox/${first}`);
    await page.keyboard.press('j');
    await page.waitForURL(`**/portal/inbox/${second}`);
    await page.locator('.transcript-pane[data-live="true"]').waitFor();

    await page.keyboard.press('a');
    await page.getByText('Handled by an agent (kim).').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Take', exact: true }).count(), 0);
    await page.keyboard.press('r');
    assert.equal(
      await page.evaluate(() => document.activeElement?.getAttribute('aria-label')),
      'Reply as agent',
    );
    await page.keyboard.type('Hello, I am Kim.');
    await page.keyboard.press('Enter');
    await page.locator('.message.agent').filter({ hasText: 'Hello, I am Kim.' }).waitFor();
    await page.keyboard.press('Escape');
    await page.keyboard.press('e');
    await page.locator('.conv-state', { hasText: 'Resolved.' }).waitFor();
    await axe(page, 'resolved conversation');
    await shot(page, '5-resolved');

    // Mine now holds what Kim took; resolved ones show under "Resolved".
    await page.getByRole('group', { name: 'View' }).getByRole('button', { name: 'Mine' }).click();
    await page.locator('#inbox-status').selectOption('resolved');
    await page.locator(`.conversation-list a.conversation[data-id="${second}"]`).waitFor();
    assert.equal(await page.locator('.conversation-list a.conversation').count(), 1);
  });

  it('labels, snoozes and reopens when the visitor writes (workspace API)', async () => {
    const { page } = browser;
    const v = visitors[0]!;
    await page.goto(`/portal/inbox/${v.conversation.id}`);
    await page.locator('.transcript-pane[data-live="true"]').waitFor();
    await page.getByLabel('Add a label').fill('vip');
    await page.getByLabel('Add a label').press('Enter');
    await page.getByRole('group', { name: 'Labels' }).getByText('vip').waitFor();
    await page.getByRole('button', { name: 'Snooze' }).click();
    await page.getByRole('button', { name: 'Until tomorrow 09:00' }).click();
    await page.locator('.conv-state', { hasText: 'Snoozed until' }).waitFor();
    await axe(page, 'snoozed conversation');
    await shot(page, '5b-snoozed');
    await page.locator('#inbox-status').selectOption('snoozed');
    await page.locator(`.conversation-list a.conversation[data-id="${v.conversation.id}"]`).waitFor();
    // The visitor writes: the conversation reopens by itself, live.
    await sendMessage(v.c.sub, 'Any news?');
    await page.locator('.conv-state', { hasText: 'Snoozed until' }).waitFor({ state: 'detached' });
    await page.locator('.message.user').filter({ hasText: 'Any news?' }).waitFor();
    await page.reload();
    await page.locator('.transcript-pane[data-live="true"]').waitFor();
    await page.getByRole('group', { name: 'Labels' }).getByText('vip').waitFor();
    await page.locator('#inbox-status').selectOption('open');
  });

  it('writes a private note with an @mention: the colleague is notified, the visitor never gets it', async () => {
    const { page } = browser;
    const v = visitors[1]!;
    await page.goto(`/portal/inbox/${v.conversation.id}`);
    await page.locator('.transcript-pane[data-live="true"]').waitFor();
    await page.getByRole('group', { name: 'Write' }).getByRole('button', { name: 'Note' }).click();
    const box = page.getByLabel('Private note');
    await box.pressSequentially('Refund approved, @an');
    await page
      .getByRole('listbox', { name: 'Colleagues' })
      .getByRole('option', { name: /ann@acme.test/ })
      .waitFor();
    await box.press('Enter');
    assert.equal(await box.inputValue(), 'Refund approved, @ann ');
    await box.pressSequentially('please confirm');
    await axe(page, 'note with mention');
    await box.press('Enter');
    const note = page.locator('.message.note').filter({ hasText: 'Refund approved, @ann please confirm' });
    await note.waitFor();
    await shot(page, '5c-note');

    const ann = await signInClient(server, 'ann@acme.test');
    const notified = await ann.get('/notifications');
    assert.equal(notified.status, 200);
    assert.ok(JSON.stringify(notified.body).includes(v.conversation.id), 'ann is notified of the mention');
    // The visitor: nothing on their channel, nothing in their reads.
    const read = await listMessages(server, v.visitor, v.conversation.id);
    assert.equal(read.status, 200);
    assert.ok(!read.text.includes('Refund approved'), 'the visitor cannot read the note');
    assert.ok(
      !v.c.log.envelopes.some((e) => JSON.stringify(e).includes('Refund approved')),
      'no envelope to the visitor',
    );
  });

  it('shows the hand-over summary and inserts a suggested reply by click, which the agent then sends', async () => {
    const { page } = browser;
    const visitor = newVisitor(acmeId);
    const asking = { ...(await connectToNewConversation(server, visitor)), visitor };
    visitors.push(asking);
    await sendMessage(asking.c.sub, 'How many days do I have to return a book?');
    await asking.c.log.waitFor((es) =>
      es.some((e) => e.message_snapshot.role === 'digital_employee' && e.operation === 'complete'),
    );
    await page.goto(`/portal/inbox/${asking.conversation.id}`);
    await page.locator('.transcript-pane[data-live="true"]').waitFor();
    const summary = page.getByRole('region', { name: 'Hand-over summary' });
    assert.equal(await summary.isVisible(), false, 'no summary before a hand-over');
    await page.keyboard.press('a');
    await page.getByText('Handled by an agent (kim).').waitFor();
    // The summary note is written in the background on the hand-over and arrives live on the inbox channel: the box
    // at the top shows it, the transcript keeps one collapsed line pointing there (the summary reads once).
    await summary.getByText('How many days do I have to return a book?').waitFor();
    const marker = page.locator('.transcript .handover-marker');
    await marker.filter({ hasText: 'Hand-over summary, shown above' }).waitFor();
    assert.equal(await marker.locator('.text').isVisible(), false, 'the marker is collapsed');
    // After a reload the conversation read gives the same: the box, and the marker in the transcript.
    await page.reload();
    await summary.getByText('How many days do I have to return a book?').waitFor();
    assert.equal(await marker.count(), 1, 'one marker for the one hand-over');
    assert.equal(
      await page.locator('.transcript .message.note:not(.handover-marker)').count(),
      0,
      'the summary is no full note in the transcript',
    );
    await marker.locator('summary').click();
    await marker.locator('.text').getByText('How many days do I have to return a book?').waitFor();
    await marker.locator('summary').click();

    const suggestions = page.getByRole('region', { name: 'Suggested replies' });
    const first = suggestions.locator('button.suggestion').first();
    await first.waitFor();
    assert.match(
      (await suggestions.locator('.sources').first().textContent()) ?? '',
      /Returns and refunds › Returning an item/,
    );
    const box = page.locator('textarea.composer-box');
    assert.equal(await box.inputValue(), '', 'nothing inserted before the click');
    assert.equal(
      asking.c.log.envelopes.filter((e) => e.message_snapshot.role === 'agent').length,
      0,
      'a suggestion is never sent by itself',
    );
    await first.click();
    assert.match(await box.inputValue(), /You can return any book within 30 days of delivery\./);
    await axe(page, 'summary and suggestions');
    await shot(page, '5d-suggestions');
    await box.focus();
    await page.keyboard.press('Enter');
    await asking.c.log.waitFor((es) =>
      es.some(
        (e) =>
          e.message_snapshot.role === 'agent' &&
          e.operation === 'complete' &&
          text(e).includes('within 30 days of delivery'),
      ),
    );
  });

  it('fits a 390 px phone: the panes become views', async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto('/portal/inbox');
    await page.locator('.conversation-list a.conversation').first().waitFor();
    // How far the page scrolls sideways, and (to say why) the deepest elements reaching past the window's edge.
    const overflow = async () => {
      const [px, wide] = await page.evaluate(() => {
        const width = document.documentElement.clientWidth;
        const past = [...document.querySelectorAll('body *')]
          .filter((el) => el.getBoundingClientRect().right > width + 0.5 && el.children.length === 0)
          .map((el) => `${el.tagName.toLowerCase()}.${el.className}`);
        return [document.documentElement.scrollWidth - width, past.slice(0, 5).join(', ')] as const;
      });
      return px <= 0 ? 0 : `${px} (${wide})`;
    };
    assert.equal(await overflow(), 0, 'no horizontal scrolling (list)');
    await axe(page, 'phone list');
    await shot(page, '6-phone-list');
    await page.locator('.conversation-list a.conversation').first().click();
    await page.locator('.transcript-pane[data-live="true"]').waitFor();
    assert.equal(await page.locator('.inbox-list').isVisible(), false, 'one pane at a time');
    assert.equal(await overflow(), 0, 'no horizontal scrolling (conversation)');
    await axe(page, 'phone conversation');
    await shot(page, '7-phone-conversation');
    await page.getByRole('button', { name: 'Visitor' }).click();
    await page.getByRole('complementary', { name: 'Visitor' }).waitFor();
    await axe(page, 'phone visitor');
    await shot(page, '8-phone-visitor');
    await page.getByRole('button', { name: '← Conversations' }).isVisible();
    await page.setViewportSize({ width: 1280, height: 800 });
    assert.deepEqual(axeStates.length, 11, `axe ran on ${axeStates.join(', ')}`);
  });
});
