import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Centrifuge } from 'centrifuge';
import {
  connectionToken,
  newClient,
  sleep,
  startTestServer,
  subscriptionToken,
  type TestServer,
  waitFor,
  waitForEvent,
} from '../testing/harness.ts';

/** Server-side subscriptions from the connection token, and presence kept alive by periodic refresh. */

let server: TestServer;
const clients: Centrifuge[] = [];

before(async () => {
  server = await startTestServer({
    namespaces: [
      { name: 'news', history_size: 10, history_ttl: '1h', force_recovery: true },
      { name: 'room', presence: true, allow_presence_for_subscriber: true },
    ],
    presenceTtlMs: 400,
    presenceUpdateIntervalMs: 150,
    timerResolutionMs: 20,
  });
});

after(async () => {
  for (const c of clients) c.disconnect();
  await server.close();
});

test('channels in the connection token become server-side subscriptions the client receives', async () => {
  const client = newClient(server.wsUrl, { token: connectionToken('reader', { channels: ['news:sport'] }) });
  clients.push(client);
  const subscribed = waitForEvent<{ channel: string; recoverable: boolean }>(client, 'subscribed');
  client.connect();
  const ctx = await subscribed;
  assert.equal(ctx.channel, 'news:sport');
  assert.equal(ctx.recoverable, true);
  const publication = waitForEvent<{ channel: string; data: unknown }>(client, 'publication');
  await server.engine.publish({ channel: 'news:sport', data: { score: '2:1' } });
  const pub = await publication;
  assert.equal(pub.channel, 'news:sport');
  assert.deepEqual(pub.data, { score: '2:1' });
});

test('a token channel in an unknown namespace fails the connect with 102', async () => {
  const client = newClient(server.wsUrl, { token: connectionToken('reader2', { channels: ['ghost:1'] }) });
  clients.push(client);
  const disconnected = waitForEvent<{ code: number }>(client, 'disconnected');
  client.connect();
  assert.equal((await disconnected).code, 102);
});

test('presence entries outlive their TTL while the client stays subscribed', async () => {
  const client = newClient(server.wsUrl, { token: connectionToken('stayer') });
  clients.push(client);
  const sub = client.newSubscription('room:1', {
    getToken: async () => subscriptionToken('stayer', 'room:1'),
  });
  client.connect();
  sub.subscribe();
  await waitForEvent(sub, 'subscribed');
  // Real time past the TTL (400 ms here): what is tested is that the entry outlives it, refreshed every 150 ms.
  await sleep(1000);
  assert.equal((await server.engine.presenceStats('room:1')).numClients, 1);
  sub.unsubscribe();
  await waitFor(
    'the entry removed on unsubscribe',
    async () => (await server.engine.presenceStats('room:1')).numClients === 0,
    5_000,
  );
});
