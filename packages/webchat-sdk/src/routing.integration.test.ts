import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../server/src/testing/test-server.ts';
import { memoryStorage } from './session-storage.ts';
import { Wire, waitFor } from './testing/harness.ts';
import { createWebchat, type Webchat } from './webchat.ts';

// The SDK's side of routing (docs/routing.md): ask for a person, learn whether agents are in.
let server: TestServer;
let companyId: string;
const open: Webchat[] = [];

before(async () => {
  server = await startTestServer();
  companyId = (await server.ctx.companies.create('Acme')).id;
});

after(async () => {
  for (const chat of open) chat.close();
  await server.close();
});

const startWebchat = async (): Promise<Webchat> => {
  const wire = new Wire();
  const chat = await createWebchat({
    baseUrl: server.baseUrl,
    companyId,
    storage: memoryStorage(),
    websocket: wire.WebSocket,
    fetch: wire.fetch,
  });
  open.push(chat);
  return chat;
};

describe('request a person', () => {
  test('queues the conversation, updates it and shows the notice live', async () => {
    const chat = await startWebchat();
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
    const chat = await startWebchat();
    await chat.start();
    const hours = await chat.requestHuman();
    assert.deepEqual(hours, { open: false, next_open_at: null, time_zone: 'UTC' });
    assert.equal((await chat.businessHours())?.open, false);
  });
});
