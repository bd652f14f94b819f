import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { http } from '@parley/testing/http-client';
import { RETURNS_ARTICLE } from '@parley/testing/knowledge/knowledge-fixtures';
import { screenshot, type TestBrowser } from '@parley/testing/portal/browser';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';
import {
  bearer,
  connectToNewConversation,
  createConversation,
  digitalEmployeeCompletes,
  fetchPlatformToken,
  listMessages,
  newVisitor,
  sendMessage,
  type Visitor,
} from '@parley/testing/webchat/webchat-fixtures';
import type { Locator } from 'playwright-core';
import { expectNoSeriousAxeViolations } from '../testing/axe.ts';

const DAY_MS = 24 * 3600 * 1000;

/**
 * Real conversations with the company's default (builtin) employee, through the SDK, the realtime connection and
 * the platform routes: A answered from knowledge, liked, closed with no person, CSAT 5; B handed to a person who
 * wrote, closed, CSAT 2, its greeting disliked; C open, its greeting liked; D closed with no person 40 days ago.
 */
async function seedConversations(server: TestServer, companyId: string): Promise<void> {
  const platform = await fetchPlatformToken(server, companyId, ['conversations:read', 'conversations:write']);
  const platformPost = async (path: string, body: unknown = {}) => {
    const res = await http(`${server.baseUrl}/platform/v1${path}`, bearer(platform, body));
    assert.ok(res.status < 300, `${path}: ${res.status} ${res.text}`);
  };
  const sdkPut = async (v: Visitor, path: string, body: unknown) => {
    const res = await http(`${server.baseUrl}/sdk/v1${path}`, {
      method: 'PUT',
      headers: { ...v.headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 200, `${path}: ${res.text}`);
  };
  const rateGreeting = async (v: Visitor, conversationId: string, rating: 'up' | 'down') => {
    const greeting = (await listMessages(server, v, conversationId)).body.messages[0];
    await sdkPut(v, `/conversations/${conversationId}/messages/${greeting.id}/feedback`, { rating });
  };
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

  const a = newVisitor(companyId);
  const { conversation: convA, c } = await connectToNewConversation(server, a);
  try {
    await sendMessage(c.sub, 'How many days do I have to return a book?');
    const [answer] = await c.log
      .waitFor((e) => digitalEmployeeCompletes(e).length > 0)
      .then(digitalEmployeeCompletes);
    assert.ok(
      answer!.message_snapshot.blocks.some((b) => b.type === 'sources'),
      'a cited answer',
    );
    await sdkPut(a, `/conversations/${convA.id}/messages/${answer!.message_snapshot.id}/feedback`, {
      rating: 'up',
    });
  } finally {
    c.close();
  }
  await platformPost(`/conversations/${convA.id}/close`);
  await sdkPut(a, `/conversations/${convA.id}/csat`, { score: 5 });

  const b = newVisitor(companyId);
  const convB = await createConversation(server, b);
  await rateGreeting(b, convB.id, 'down');
  await platformPost(`/conversations/${convB.id}/handover`, { author: { name: 'Kim' } });
  await platformPost(`/conversations/${convB.id}/messages`, {
    blocks: [{ type: 'markdown', content: 'Kim here.' }],
    author: { name: 'Kim' },
  });
  await platformPost(`/conversations/${convB.id}/close`);
  await sdkPut(b, `/conversations/${convB.id}/csat`, { score: 2 });

  const cv = newVisitor(companyId);
  const convC = await createConversation(server, cv);
  await rateGreeting(cv, convC.id, 'up');

  const d = newVisitor(companyId);
  const convD = await createConversation(server, d);
  await platformPost(`/conversations/${convD.id}/close`);
  await server.ctx.store.db
    .updateTable('conversations')
    .set({ created_at: new Date(Date.now() - 40 * DAY_MS).toISOString() })
    .where('id', '=', convD.id)
    .execute();
}

/** The figure a tile shows, and the line under it. */
async function tile(section: Locator, name: string): Promise<{ value: string; detail: string }> {
  const outcome = section
    .locator('.outcome')
    .filter({ has: section.page().getByRole('term').filter({ hasText: name }) });
  return {
    value: ((await outcome.locator('dd.figure').textContent()) ?? '').trim(),
    detail: ((await outcome.locator('dd.muted').textContent()) ?? '').trim(),
  };
}

describe('portal in a browser: outcomes of a digital employee', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let companyId: string;
  before(async () => {
    ({ server, browser, companyId } = await startPortalPage({
      section: 'Digital employees',
      seed: async (server, companyId) => {
        await seedConversations(server, companyId);
        await server.ctx.digitalEmployees.create({
          companyId,
          name: 'Quiet',
          responder: 'builtin',
          connectorId: null,
          model: null,
          systemPrompt: null,
          settings: {},
          isDefault: false,
        });
      },
    }));
  });
  after(() => closePortalPage({ server, browser }));

  it('shows the figures of the default employee for 30 days, then for 90 days and for another employee', async () => {
    const { page } = browser;
    const section = page.getByRole('region', { name: 'Outcomes' });
    const figures = section.locator('.outcome-figures[aria-busy="false"]');
    await figures.locator('dl.outcomes').waitFor();
    const def = await server.ctx.digitalEmployees.getDefault(companyId);
    assert.equal(
      await section.getByLabel('Digital employee').inputValue(),
      def.id,
      'the default is chosen first',
    );
    assert.equal(await section.getByLabel('Period').inputValue(), '30');

    assert.deepEqual(await tile(section, 'Conversations'), { value: '3', detail: 'started in this period' });
    assert.deepEqual(await tile(section, 'Answered from knowledge'), {
      value: '1',
      detail: 'cited: 25% of 4 replies', // three greetings and the cited answer
    });
    assert.deepEqual(await tile(section, 'Handed over'), { value: '1', detail: '33% of 3 conversations' });
    assert.deepEqual(await tile(section, 'Resolved without a person'), {
      value: '1',
      detail: '33% of 3 conversations',
    });
    assert.deepEqual(await tile(section, 'Feedback'), {
      value: '67%',
      detail: 'helpful: 2 up, 1 down',
    });
    assert.deepEqual(await tile(section, 'CSAT'), { value: '3.5 / 5', detail: 'from 2 ratings' });
    await screenshot(page, 'digital-employee-outcomes');
    const axe = await expectNoSeriousAxeViolations(page, 'outcomes of a digital employee');
    assert.ok(axe.passes > 0);

    // The 40-day-old conversation joins a window of 90 days.
    await section.getByLabel('Period').selectOption('90');
    await section.getByText(/^Conversations started since /).waitFor();
    await figures.locator('dl.outcomes').waitFor();
    await page.waitForFunction(() =>
      [...document.querySelectorAll('dl.outcomes .outcome')].some(
        (o) =>
          o.querySelector('dt')?.textContent === 'Conversations' &&
          o.querySelector('dd.figure')?.textContent === '4',
      ),
    );
    assert.deepEqual(await tile(section, 'Resolved without a person'), {
      value: '2',
      detail: '50% of 4 conversations',
    });

    // Another employee has nothing yet: no invented figures.
    await section.getByLabel('Digital employee').selectOption({ label: 'Quiet' });
    await page.waitForFunction(() =>
      [...document.querySelectorAll('dl.outcomes .outcome')].some(
        (o) =>
          o.querySelector('dt')?.textContent === 'Conversations' &&
          o.querySelector('dd.figure')?.textContent === '0',
      ),
    );
    assert.deepEqual(await tile(section, 'Handed over'), { value: '0', detail: 'no conversations yet' });
    assert.deepEqual(await tile(section, 'CSAT'), { value: '—', detail: 'no ratings yet' });
    assert.deepEqual(await tile(section, 'Feedback'), { value: '—', detail: 'no thumbs yet' });
  });
});
