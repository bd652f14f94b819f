import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Centrifuge, PublicationContext, SubscribedContext, Subscription } from 'centrifuge';
import { MemoryBroker } from '../broker/memory.ts';
import { FaultyBroker } from '../testing/faulty-broker.ts';
import {
  closedAfterAll,
  connectionToken,
  connectRawClient,
  newClient,
  startTestServer,
  subscriptionToken,
  type TestServer,
  waitFor,
  waitForEvent,
} from '../testing/harness.ts';
import type { NamespaceConfig } from './namespaces.ts';

/**
 * History-based recovery, race-free subscribe and positioning
 * (docs/protocol.md "History, recovery and positioning") with the real client.
 */

const CHAT: NamespaceConfig = {
  name: 'chat',
  history_size: 100,
  history_ttl: '1h',
  force_recovery: true,
  allow_publish_for_subscriber: true,
};
const SMALL: NamespaceConfig = { name: 'small', history_size: 3, history_ttl: '1h', force_recovery: true };

const cleanups = closedAfterAll();

async function startServer(options: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const server = await startTestServer({ namespaces: [CHAT, SMALL], ...options });
  cleanups.push(() => server.close());
  return server;
}

function newUserClient(
  server: TestServer,
  user: string,
  options: Parameters<typeof newClient>[1] = {},
): Centrifuge {
  const c = newClient(server.wsUrl, {
    token: connectionToken(user),
    minReconnectDelay: 200,
    maxReconnectDelay: 400,
    ...options,
  });
  cleanups.push(() => c.disconnect());
  return c;
}

function newRecordedSubscription(
  c: Centrifuge,
  user: string,
  channel: string,
  options = {},
): { sub: Subscription; received: number[]; contexts: SubscribedContext[] } {
  const sub = c.newSubscription(channel, {
    getToken: async () => subscriptionToken(user, channel),
    ...options,
  });
  const received: number[] = [];
  const contexts: SubscribedContext[] = [];
  sub.on('publication', (ctx: PublicationContext) => received.push((ctx.data as { n: number }).n));
  sub.on('subscribed', (ctx) => contexts.push(ctx));
  return { sub, received, contexts };
}

async function publishRange(server: TestServer, channel: string, from: number, to: number): Promise<void> {
  for (let n = from; n <= to; n++) await server.engine.publish({ channel, data: { n } });
}

const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('recovery after a dropped connection', () => {
  test('missed publications are recovered exactly once and in order', async () => {
    const server = await startServer();
    const c = newUserClient(server, 'alice');
    const { sub, received, contexts } = newRecordedSubscription(c, 'alice', 'chat:recover');
    c.connect();
    sub.subscribe();
    await waitForEvent(sub, 'subscribed');
    await publishRange(server, 'chat:recover', 1, 3);
    await waitFor('first publications', () => received.length === 3, 5000);
    const disconnected = waitForEvent(c, 'connecting');
    await server.engine.disconnectUser('alice', { code: 4000, reason: 'network blip' });
    await disconnected;
    await publishRange(server, 'chat:recover', 4, 9);
    await waitFor('resubscribe', () => contexts.length === 2, 5000);
    await publishRange(server, 'chat:recover', 10, 10);
    await waitFor('all publications', () => received.length >= 10, 5000);
    assert.deepEqual(received, range(1, 10));
    assert.equal(contexts[1]!.wasRecovering, true);
    assert.equal(contexts[1]!.recovered, true);
  });

  test('a position older than the retained window resubscribes with recovered: false and the current top', async () => {
    const server = await startServer();
    const c = newUserClient(server, 'bob');
    const { sub, received, contexts } = newRecordedSubscription(c, 'bob', 'small:lossy');
    c.connect();
    sub.subscribe();
    await waitForEvent(sub, 'subscribed');
    await publishRange(server, 'small:lossy', 1, 1);
    await waitFor('first publication', () => received.length === 1, 5000);
    const disconnected = waitForEvent(c, 'connecting');
    await server.engine.disconnectUser('bob', { code: 4000 });
    await disconnected;
    await publishRange(server, 'small:lossy', 2, 8);
    await waitFor('resubscribe', () => contexts.length === 2, 5000);
    assert.equal(contexts[1]!.wasRecovering, true);
    assert.equal(contexts[1]!.recovered, false);
    assert.equal(contexts[1]!.streamPosition?.offset, 8);
    assert.deepEqual(received, [1], 'nothing is replayed when recovery is impossible');
    await publishRange(server, 'small:lossy', 9, 9);
    await waitFor('live publication', () => received.length === 2, 5000);
    assert.deepEqual(received, [1, 9]);
  });

  test('with getState (flag bit 2) an unrecoverable position is rejected with 112 and getState runs again', async () => {
    const server = await startServer();
    await publishRange(server, 'small:state', 1, 6);
    const top = await server.engine.history('small:state');
    let calls = 0;
    const c = newUserClient(server, 'carol');
    const { sub, received, contexts } = newRecordedSubscription(c, 'carol', 'small:state', {
      getState: async () => {
        calls += 1;
        return calls === 1 ? { offset: 1, epoch: top.epoch } : { offset: top.offset, epoch: top.epoch };
      },
    });
    c.connect();
    sub.subscribe();
    await waitFor('subscribed', () => contexts.length === 1, 5000);
    assert.equal(calls, 2);
    assert.equal(contexts[0]!.recovered, true);
    await publishRange(server, 'small:state', 7, 7);
    await waitFor('live publication', () => received.length === 1, 5000);
    assert.deepEqual(received, [7]);
  });

  test('publications racing a recovering subscribe arrive once, in order (register, buffer, read, merge)', async () => {
    const broker = new FaultyBroker(new MemoryBroker());
    const server = await startServer({ broker, closeBroker: true });
    await publishRange(server, 'chat:race', 1, 5);
    const start = await server.engine.history('chat:race');
    const c = newUserClient(server, 'dave');
    const { sub, received, contexts } = newRecordedSubscription(c, 'dave', 'chat:race', {
      since: { offset: 2, epoch: start.epoch },
    });
    c.connect();
    await waitForEvent(c, 'connected');
    // 6–8 land after registration but before the read (delivered live and in history: must not duplicate);
    // 9–11 land after the read (only in the live buffer: must not be lost).
    broker.beforeHistory = () => publishRange(server, 'chat:race', 6, 8);
    broker.afterHistory = () => publishRange(server, 'chat:race', 9, 11);
    sub.subscribe();
    await waitFor('all publications', () => received.length >= 9, 5000);
    await publishRange(server, 'chat:race', 12, 12);
    await waitFor('live publication', () => received.length >= 10, 5000);
    assert.deepEqual(received, range(3, 12));
    assert.equal(contexts[0]!.recovered, true);
  });

  test('a fresh subscribe racing publications starts at the read position and misses nothing after it', async () => {
    const broker = new FaultyBroker(new MemoryBroker());
    const server = await startServer({ broker, closeBroker: true });
    const c = newUserClient(server, 'dora');
    const { sub, received, contexts } = newRecordedSubscription(c, 'dora', 'chat:fresh');
    c.connect();
    await waitForEvent(c, 'connected');
    broker.beforeHistory = () => publishRange(server, 'chat:fresh', 1, 2);
    broker.afterHistory = () => publishRange(server, 'chat:fresh', 3, 4);
    sub.subscribe();
    await waitFor('publications after the read', () => received.length >= 2, 5000);
    assert.equal(contexts[0]!.streamPosition?.offset, 2);
    assert.deepEqual(received, [3, 4]);
  });
});

describe('positioning', () => {
  test('a gap in live offsets unsubscribes with 2500 and the client recovers what was lost', async () => {
    const broker = new FaultyBroker(new MemoryBroker());
    const server = await startServer({ broker, closeBroker: true });
    const c = newUserClient(server, 'erin');
    const { sub, received, contexts } = newRecordedSubscription(c, 'erin', 'chat:gap');
    const unsubscribeCodes: number[] = [];
    sub.on('subscribing', (ctx) => unsubscribeCodes.push(ctx.code));
    c.connect();
    sub.subscribe();
    await waitForEvent(sub, 'subscribed');
    broker.dropOffsets.add(2);
    await publishRange(server, 'chat:gap', 1, 3);
    await waitFor('recovered publications', () => received.length >= 3, 5000);
    assert.deepEqual(received, [1, 2, 3]);
    assert.ok(unsubscribeCodes.includes(2500), `resubscribe reasons ${unsubscribeCodes}`);
    assert.equal(contexts.at(-1)!.recovered, true);
  });

  test('a publish sent before the client read its 2500 push is answered 503 temporary, not 103', async () => {
    const broker = new FaultyBroker(new MemoryBroker());
    const server = await startServer({ broker, closeBroker: true });
    const raw = await connectRawClient(server.wsUrl, connectionToken('gina'));
    cleanups.push(() => raw.close());
    raw.send({ id: 2, subscribe: { channel: 'chat:race', token: subscriptionToken('gina', 'chat:race') } });
    await raw.waitForReply(2);
    broker.dropOffsets.add(2);
    await publishRange(server, 'chat:race', 1, 3);
    await raw.waitForMessage(
      (m) => (m.push as { unsubscribe?: { code: number } })?.unsubscribe?.code === 2500,
    );
    // A client that has not processed the push yet still publishes on the channel.
    raw.send({ id: 3, publish: { channel: 'chat:race', data: { n: 9 } } });
    assert.deepEqual((await raw.waitForReply(3)).error, {
      code: 503,
      message: 'resubscribing',
      temporary: true,
    });
    // Once resubscribed, publishing works; a channel it was never told to resubscribe to is still 103.
    raw.send({ id: 4, subscribe: { channel: 'chat:race', token: subscriptionToken('gina', 'chat:race') } });
    await raw.waitForReply(4);
    raw.send({ id: 5, publish: { channel: 'chat:race', data: { n: 10 } } });
    assert.equal((await raw.waitForReply(5)).error, undefined);
    raw.send({ id: 6, publish: { channel: 'chat:other', data: { n: 11 } } });
    assert.equal(((await raw.waitForReply(6)) as { error: { code: number } }).error.code, 103);
  });

  test('a lost last publication is found by the periodic position check', async () => {
    const broker = new FaultyBroker(new MemoryBroker());
    const server = await startServer({ broker, closeBroker: true, channelPositionCheckDelayMs: 300 });
    const c = newUserClient(server, 'frank');
    const { sub, received } = newRecordedSubscription(c, 'frank', 'chat:quiet');
    c.connect();
    sub.subscribe();
    await waitForEvent(sub, 'subscribed');
    broker.dropOffsets.add(2);
    await publishRange(server, 'chat:quiet', 1, 2);
    await waitFor('the lost publication', () => received.length >= 2, 5000);
    assert.deepEqual(received, [1, 2]);
  });
});
