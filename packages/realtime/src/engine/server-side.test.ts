import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Centrifuge } from 'centrifuge';
import { MemoryPresenceManager } from '../broker/memory.ts';
import type { ClientInfo } from '../broker/types.ts';
import {
  connectionToken,
  newClient,
  startTestServer,
  subscriptionToken,
  type TestServer,
  waitFor,
  waitForEvent,
} from '../testing/harness.ts';

/** Server-side subscriptions from the connection token, and presence kept alive by periodic refresh. */

let server: TestServer;
const clients: Centrifuge[] = [];

/** When each presence entry of `room:1` was written (the hub's own clock, Date.now): the first add, then refreshes. */
const presenceWrites: number[] = [];

class RecordingPresenceManager extends MemoryPresenceManager {
  override async addPresence(
    channel: string,
    clientId: string,
    info: ClientInfo,
    ttlMs: number,
  ): Promise<void> {
    await super.addPresence(channel, clientId, info, ttlMs);
    if (channel === 'room:1') presenceWrites.push(Date.now());
  }
}

before(async () => {
  server = await startTestServer({
    namespaces: [
      { name: 'news', history_size: 10, history_ttl: '1h', force_recovery: true },
      { name: 'room', presence: true, allow_presence_for_subscriber: true },
    ],
    presenceManager: new RecordingPresenceManager(),
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
  // The entry outlives its TTL (400 ms here) when it was refreshed (every 150 ms) past the first write's expiry.
  await waitFor('the first presence write', () => presenceWrites.length > 0, 5_000);
  const first = presenceWrites[0]!;
  await waitFor(
    'a refresh past the first write’s TTL',
    () => presenceWrites.some((at) => at > first + 400),
    5_000,
  );
  assert.equal((await server.engine.presenceStats('room:1')).numClients, 1);
  sub.unsubscribe();
  await waitFor(
    'the entry removed on unsubscribe',
    async () => (await server.engine.presenceStats('room:1')).numClients === 0,
    5_000,
  );
});
