import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { TestWebchats, waitFor } from './testing/harness.ts';

// The SDK's side of routing (docs/routing.md): ask for a person, learn whether agents are in.
let server: TestServer;
let companyId: string;
const webchats = new TestWebchats(() => ({ baseUrl: server.baseUrl, companyId }));

before(async () => {
  server = await startTestServer();
  companyId = (await server.ctx.companies.create('Acme')).id;
});

after(async () => {
  webchats.closeAll();
  await server.close();
});

describe('request a person', () => {
  test('queues the conversation, updates it and shows the notice live', async () => {
    const chat = await webchats.start();
    await chat.start();
    assert.deepEqual(await chat.businessHours(), { open: true, next_open_at: null, time_zone: null });
    const updated = new Promise((resolve) => chat.on('conversation:updated', resolve));
    const hours = await chat.requestHuman();
    assert.equal(hours?.open, true);
    await updated;
    assert.ok(chat.conversation?.queued_at, 'the conversation says it waits in the queue');
    await waitFor('the queue notice', () =>
      chat.messages.find((m) => m.role === 'system' && /join shortly/.test(m.text)),
    );
  });

  test('outside business hours says when agents are back', async () => {
    await server.ctx.webchat.routingSettings.update(companyId, {
      businessHours: { time_zone: 'UTC', weekly: {}, holidays: [] },
    });
    const chat = await webchats.start();
    await chat.start();
    const hours = await chat.requestHuman();
    assert.deepEqual(hours, { open: false, next_open_at: null, time_zone: 'UTC' });
    assert.equal((await chat.businessHours())?.open, false);
  });
});
