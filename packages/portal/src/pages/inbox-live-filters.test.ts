import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestClock } from '@parley/testing/clock';
import { screenshotFolder, type TestBrowser } from '@parley/testing/portal/browser';
import { signInClient } from '@parley/testing/portal/portal-fixtures';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';
import {
  type ConnectedVisitor,
  connectToNewConversation,
  createSlowEmployee,
  newVisitor,
} from '@parley/testing/webchat/webchat-fixtures';
import type { Page } from 'playwright-core';
import { expectNoSeriousAxeViolations } from '../testing/axe.ts';

/** Screenshots to look at (outside the repository). */
const shot = screenshotFolder('inbox-live-filters');
const HOUR = 3_600_000;

/**
 * The list follows the world without a reload (docs/routing.md "Live inbox"): a snoozed conversation comes back as
 * open when the server's clock passes its time and the snooze wake-up job runs (the server's injected clock drives
 * its scheduled jobs, packages/server/src/workspace/snooze-wake.job.ts), and a label a colleague adds or removes
 * moves conversations in and out of a label-filtered list, the new label joining the filter's choices.
 */
describe('portal in a browser: the live list (injected clock, labels by a colleague)', () => {
  let server: TestServer;
  let browser: TestBrowser;
  const clock = new TestClock();
  const conversations: Array<{ conversation: { id: string }; c: ConnectedVisitor }> = [];
  const entry = (page: Page, id: string) =>
    page.locator(`.conversation-list a.conversation[data-id="${id}"]`);

  before(async () => {
    ({ server, browser } = await startPortalPage({
      server: {
        clock: clock.now,
        // The clock moves hours ahead below: the agent's portal session must outlive that.
        config: { webchat: { streamFlushIntervalMs: 0 }, portal: { sessionIdleSeconds: 24 * 3600 } },
      },
      users: { 'kim@acme.test': 'agent', 'ann@acme.test': 'agent' },
      signInAs: 'kim@acme.test',
      seed: async (server, companyId) => {
        const bot = await createSlowEmployee(server, companyId, { words: 2, delayMs: 5 });
        await server.ctx.digitalEmployees.setDefault(companyId, bot.id);
        for (let i = 0; i < 3; i++)
          conversations.push(await connectToNewConversation(server, newVisitor(companyId)));
        // One conversation labelled before the page loads, so the label filter offers "vip" from the start.
        await server.ctx.workspace.service.setLabels(companyId, conversations[0]!.conversation.id, ['vip'], {
          id: 'test',
        });
      },
    }));
    // Set once: a reload would lose it, so finding it later shows the page was never reloaded.
    await browser.page.evaluate(() => {
      (window as unknown as { notReloaded: boolean }).notReloaded = true;
    });
  });
  after(async () => {
    for (const v of conversations) v.c.close();
    await closePortalPage({ server, browser });
  });

  const stillSamePage = (page: Page) =>
    page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded === true);

  it('snoozes in the inbox; the server clock passes the time and the conversation is back as open, live', async () => {
    const { page } = browser;
    const id = conversations[1]!.conversation.id;
    await page.locator('main[data-inbox-live="true"]').waitFor();
    await entry(page, id).click();
    await page.locator('.transcript-pane[data-live="true"]').waitFor();
    await page.getByRole('button', { name: 'Snooze' }).click();
    await page.getByRole('button', { name: 'For 1 hour' }).click();
    await page.locator('.conv-state', { hasText: 'Snoozed until' }).waitFor();
    // The list shows open conversations: the snoozed one leaves it at once.
    await entry(page, id).waitFor({ state: 'detached' });
    await expectNoSeriousAxeViolations(page, 'snoozed, gone from the open list');
    await shot(page, '1-snoozed');

    // Half an hour on, the job finds nothing due: still snoozed.
    clock.advance(HOUR / 2);
    await server.ctx.scheduler.tick();
    const half = await signInClient(server, 'ann@acme.test');
    assert.equal((await half.get(`/inbox/conversations/${id}`)).body.status, 'snoozed');
    assert.equal(await entry(page, id).count(), 0);

    // Past the hour: the wake-up job reopens it, and the inbox channel brings it back into the open list.
    clock.advance(HOUR);
    await server.ctx.scheduler.tick();
    await entry(page, id).waitFor();
    await page.locator('.conv-state', { hasText: 'Snoozed until' }).waitFor({ state: 'detached' });
    assert.equal(await page.locator('#inbox-status').inputValue(), 'open');
    assert.ok(await stillSamePage(page), 'no reload');
    const detail = await half.get(`/inbox/conversations/${id}`);
    assert.equal(detail.body.status, 'open');
    assert.equal(detail.body.snoozed_until, null);
    await expectNoSeriousAxeViolations(page, 'woken up');
    await shot(page, '2-woken');
  });

  it('filters by a label; a colleague labelling or unlabelling conversations moves them in and out, live', async () => {
    const { page } = browser;
    const [vip, plain] = [conversations[0]!.conversation.id, conversations[2]!.conversation.id];
    await page.locator('#inbox-label').selectOption('vip');
    await entry(page, vip).waitFor();
    await entry(page, plain).waitFor({ state: 'detached' });
    assert.equal(await page.locator('.conversation-list a.conversation').count(), 1);

    // Ann, in her own portal session, labels the other conversation: it joins Kim's filtered list.
    const ann = await signInClient(server, 'ann@acme.test');
    const labelled = await ann.put(`/inbox/conversations/${plain}/labels`, { labels: ['vip', 'refund'] });
    assert.equal(labelled.status, 200, labelled.text);
    await entry(page, plain).locator('.badge.label', { hasText: 'refund' }).waitFor();
    // "refund" was unknown when the page loaded: it is a filter choice now.
    await page.locator('#inbox-label option[value="refund"]').waitFor({ state: 'attached' });
    await expectNoSeriousAxeViolations(page, 'label filter');
    await shot(page, '3-label-filter');

    // Ann takes "vip" off the first one: it leaves the list.
    const unlabelled = await ann.put(`/inbox/conversations/${vip}/labels`, { labels: [] });
    assert.equal(unlabelled.status, 200, unlabelled.text);
    await entry(page, vip).waitFor({ state: 'detached' });
    await entry(page, plain).waitFor();

    // She gives the conversation woken above "vip" alone: it joins the "vip" list, which so holds one that "refund"
    // must leave out (with "vip" and "refund" on the same single conversation either filter would show the same).
    const vipOnly = conversations[1]!.conversation.id;
    const vipAlone = await ann.put(`/inbox/conversations/${vipOnly}/labels`, { labels: ['vip'] });
    assert.equal(vipAlone.status, 200, vipAlone.text);
    await entry(page, vipOnly).waitFor();
    assert.equal(await page.locator('.conversation-list a.conversation').count(), 2, 'both carry "vip"');
    await page.locator('#inbox-label').selectOption('refund');
    await entry(page, vipOnly).waitFor({ state: 'detached' });
    await entry(page, plain).waitFor();
    assert.equal(await page.locator('.conversation-list a.conversation').count(), 1);
    assert.ok(await stillSamePage(page), 'no reload');
  });
});
