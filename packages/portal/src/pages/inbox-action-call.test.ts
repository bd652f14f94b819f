import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  TestBot,
  writeChatCompletionStream,
  writeToolCallStream,
} from '@parley/testing/digital-employees/test-bots';
import { http } from '@parley/testing/http-client';
import { ARTIFACTS, screenshot, type TestBrowser } from '@parley/testing/portal/browser';
import { closePortalPage, startPortalPage } from '@parley/testing/portal/portal-page';
import type { TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  bearer,
  type ConnectedVisitor,
  connectVisitor,
  createConversation,
  digitalEmployeeCompletes,
  fetchPlatformToken,
  listMessages,
  newVisitor,
  sendMessage,
  type Visitor,
} from '@parley/testing/webchat/webchat-fixtures';
import { expectNoSeriousAxeViolations } from '../testing/axe.ts';

const MODEL = 'parley-test-model';

interface ChatBody {
  messages: Array<{ role: string }>;
}

/**
 * An `openai` digital employee (the local OpenAI-compatible test server, streamed chat completions with tool calls)
 * with two actions on an `http` connector to a local shop service: in one round it looks an order up (200) and
 * tracks a parcel the shop does not know (404), then answers. The agent's transcript shows both calls as cards; the
 * visitor never receives them.
 */
async function seedActionCalls(
  server: TestServer,
  companyId: string,
  model: TestBot,
  shop: TestBot,
): Promise<{ visitor: Visitor; guest: ConnectedVisitor; conversationId: string }> {
  const modelConnector = await server.ctx.connectors.create(
    { companyId, name: 'model', type: 'openai', url: `${model.url}/v1`, apiKey: 'sk-test-model' },
    { actor: 'test' },
  );
  const employee = await server.ctx.digitalEmployees.create({
    companyId,
    name: 'Max',
    responder: 'openai',
    connectorId: modelConnector.id,
    model: MODEL,
    systemPrompt: 'You are Max of Acme.',
    settings: {},
    isDefault: true,
  });
  const shopConnector = await server.ctx.connectors.create(
    { companyId, name: 'shop', type: 'http', url: `${shop.url}/api`, apiKey: 'shop-key-secret' },
    { actor: 'test' },
  );
  const orderId = { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] };
  for (const [name, path] of [
    ['lookup_order', '/orders/{order_id}'],
    ['track_parcel', '/parcels/{order_id}'],
  ] as const)
    await server.ctx.actions.create(companyId, employee.id, {
      name,
      description: `${name} by the order id.`,
      parameters: orderId,
      connector_id: shopConnector.id,
      method: 'GET',
      path,
      status_text: 'Looking up your order…',
    });

  model.handler = (req, res) => {
    const body = req.body as ChatBody;
    if (!body.messages.some((m) => m.role === 'tool'))
      return writeToolCallStream(res, MODEL, [
        { id: 'call_1', name: 'lookup_order', arguments: '{"order_id":"A-1017"}' },
        { id: 'call_2', name: 'track_parcel', arguments: '{"order_id":"A-1017"}' },
      ]);
    return writeChatCompletionStream(res, MODEL, [
      'Your order A-1017 has shipped ',
      'and arrives on Friday.',
    ]);
  };
  shop.handler = (req, res) => {
    if (req.path.startsWith('/api/orders/')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ order: 'A-1017', state: 'shipped', items: 2, eta: '2026-12-04' }));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ message: 'no such parcel' }));
  };

  const visitor = newVisitor(companyId);
  const conversation = await createConversation(server, visitor);
  const guest = await connectVisitor(server, visitor, conversation);
  await sendMessage(guest.sub, 'Where is my order A-1017?');
  await guest.log.waitFor((e) => digitalEmployeeCompletes(e).length > 0, 20_000, 'the reply');
  // The calls' notes are written as the calls end; wait until agents can read both.
  const token = await fetchPlatformToken(server, companyId, ['conversations:read']);
  await waitFor('both action notes', async () => {
    const res = await http(
      `${server.baseUrl}/platform/v1/conversations/${conversation.id}/messages`,
      bearer(token),
    );
    return res.body.messages.filter((m: { role: string }) => m.role === 'note').length === 2;
  });
  return { visitor, guest, conversationId: conversation.id };
}

describe('portal in a browser: an action call in the inbox transcript', () => {
  let server: TestServer;
  let browser: TestBrowser;
  let model: TestBot;
  let shop: TestBot;
  let seeded: Awaited<ReturnType<typeof seedActionCalls>> | undefined;
  before(async () => {
    model = await TestBot.start();
    shop = await TestBot.start();
    ({ server, browser } = await startPortalPage({
      users: { 'kim@acme.test': 'agent' },
      signInAs: 'kim@acme.test',
      seed: async (server, companyId) => {
        seeded = await seedActionCalls(server, companyId, model, shop);
      },
    }));
  });
  after(async () => {
    seeded?.guest.close();
    await closePortalPage({ server, browser });
    await model?.close();
    await shop?.close();
  });

  it('shows each call and its result as a private card to the agent, and nothing of it to the visitor', async () => {
    const { page } = browser;
    const { conversationId, visitor, guest } = seeded!;
    await page.locator(`a.conversation[data-id="${conversationId}"]`).click();
    const cards = page.locator('.transcript .message.action-call');
    await cards.nth(1).waitFor();
    assert.equal(await cards.count(), 2);

    const found = cards.filter({ has: page.locator('code.action-name', { hasText: 'lookup_order' }) });
    assert.match((await found.locator('.who').textContent()) ?? '', /Max · private note/);
    assert.match(
      (await found.locator('.action-outcome').textContent()) ?? '',
      /^Succeeded · HTTP 200 · \d+ ms$/,
    );
    const pairs = async (part: number) =>
      found
        .locator('.action-part')
        .nth(part)
        .locator('dl.action-fields')
        .evaluate((dl) =>
          Object.fromEntries(
            [...dl.querySelectorAll('dt')].map((dt) => [dt.textContent, dt.nextElementSibling?.textContent]),
          ),
        );
    assert.deepEqual(await pairs(0), { order_id: 'A-1017' }, 'the arguments, field by field');
    assert.deepEqual(
      await pairs(1),
      { order: 'A-1017', state: 'shipped', items: '2', eta: '2026-12-04' },
      'the result, field by field (no raw JSON)',
    );

    const missing = cards.filter({ has: page.locator('code.action-name', { hasText: 'track_parcel' }) });
    assert.equal(await missing.getAttribute('data-outcome'), 'http_error');
    assert.match((await missing.locator('.action-outcome').textContent()) ?? '', /^HTTP error · HTTP 404/);
    assert.equal(await missing.locator('.action-error').textContent(), 'The service answered HTTP 404.');
    assert.match((await missing.locator('.action-part').nth(1).textContent()) ?? '', /no such parcel/);

    // The reply the visitor got sits in the same transcript.
    await page
      .locator('.transcript .message.digital_employee', { hasText: 'has shipped and arrives on Friday.' })
      .waitFor();
    const order = await page
      .locator('.transcript > li')
      .evaluateAll((items) => items.map((li) => li.className.replace('message ', '')));
    assert.deepEqual(
      order.filter((c) => c !== 'unread-separator'),
      // The answer's message takes its place in the conversation when it starts streaming, before the calls.
      ['user', 'digital_employee', 'note action-call', 'note action-call'],
      'the question, the answer, and the calls made while it was written',
    );
    await screenshot(page, 'inbox-action-call');
    // The cards themselves (the transcript scrolls inside the page): what an agent reads.
    await page.locator('.transcript').evaluate((ol) => {
      ol.scrollTop = ol.scrollHeight;
    });
    await page.locator('.transcript').screenshot({ path: join(ARTIFACTS, 'inbox-action-call-cards.png') });
    await expectNoSeriousAxeViolations(page, 'inbox with action calls');

    // The visitor: neither the SDK's read nor anything the realtime connection delivered names a call.
    const read = await listMessages(server, visitor, conversationId);
    assert.equal(read.status, 200);
    assert.match(read.text, /arrives on Friday/);
    for (const seen of [read.text, JSON.stringify(guest.log.envelopes)]) {
      assert.ok(!seen.includes('lookup_order') && !seen.includes('track_parcel'), 'no action call');
      assert.ok(!seen.includes('2026-12-04'), 'no action result');
      assert.ok(!seen.includes('"role":"note"'), 'no note');
    }
    assert.ok(!server.logs.join('\n').includes('shop-key-secret'), 'the connector key is never logged');
  });
});
