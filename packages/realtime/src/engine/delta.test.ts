import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, test } from 'node:test';
import { Centrifuge, type Subscription } from 'centrifuge';
import { Centrifuge as CentrifugeProtobuf } from 'centrifuge/build/protobuf';
import WebSocket from 'ws';
import {
  closedAfterAll,
  connectionToken,
  connectRawClient,
  newRedisBackend,
  startTestServer,
  type TestServer,
  waitFor,
  waitForEvent,
} from '../testing/harness.ts';
import type { NamespaceConfig } from './namespaces.ts';

/**
 * Fossil delta compression with the official client (docs/protocol.md "Delta compression"): negotiated per
 * subscription with `delta: "fossil"` where the namespace's `allowed_delta_types` allows it; publications published
 * for delta delivery (`delta_publish`, or the API's `delta`) arrive as deltas against the previous one, the client
 * rebuilds every document exactly, and the bytes on the wire shrink.
 */

const cleanups = closedAfterAll();
const NAMESPACES: NamespaceConfig[] = [
  {
    name: 'doc',
    history_size: 20,
    history_ttl: '60s',
    force_recovery: true,
    allow_subscribe_for_client: true,
    allowed_delta_types: ['fossil'],
    delta_publish: true,
  },
  { name: 'nodelta', allow_subscribe_for_client: true, delta_publish: true },
  { name: 'perpub', allow_subscribe_for_client: true, allowed_delta_types: ['fossil'] },
];

/** A ~2 KiB JSON document; `version` changes 20 bytes of it at a time. */
function documentAt(version: number): { version: number; body: string; items: string[] } {
  return {
    version,
    body: `${String(version).padStart(20, '0')}`,
    items: Array.from({ length: 60 }, (_, i) => `item-${i}-constant-text`),
  };
}

let server: TestServer;
before(async () => {
  server = await startTestServer({ namespaces: NAMESPACES });
  cleanups.push(() => server.close());
});

function newSubscriber(
  format: 'json' | 'protobuf',
  channel: string,
  url = server.wsUrl,
): { client: Centrifuge; sub: Subscription; received: unknown[] } {
  const Client = (format === 'protobuf' ? CentrifugeProtobuf : Centrifuge) as typeof Centrifuge;
  const client = new Client(url, {
    websocket: WebSocket,
    token: connectionToken(`delta-${format}`),
    minReconnectDelay: 10,
  });
  cleanups.push(() => client.disconnect());
  const sub = client.newSubscription(channel, { delta: 'fossil' });
  const received: unknown[] = [];
  sub.on('publication', (ctx) => {
    received.push(
      format === 'protobuf' ? JSON.parse(new TextDecoder().decode(ctx.data as Uint8Array)) : ctx.data,
    );
  });
  return { client, sub, received };
}

for (const format of ['json', 'protobuf'] as const) {
  describe(`fossil deltas, ${format}`, () => {
    test('every document arrives intact; after the first, as deltas many times smaller', async () => {
      const channel = `doc:${format}-${randomUUID()}`;
      const { client, sub, received } = newSubscriber(format, channel);
      client.connect();
      sub.subscribe();
      await waitForEvent(sub, 'subscribed');
      for (let v = 1; v <= 10; v++) await server.engine.publish({ channel, data: documentAt(v) });
      await waitFor('ten documents', () => received.length === 10);
      assert.deepEqual(
        received,
        Array.from({ length: 10 }, (_, i) => documentAt(i + 1)),
      );
      const stats = sub.deltaStats();
      assert.equal(stats.numFullPayloads, 1);
      assert.equal(stats.numDeltaPayloads, 9);
      const fullBytes = Buffer.byteLength(JSON.stringify(documentAt(1)));
      assert.ok(stats.bytesReceived * 5 < fullBytes * 10, `bytes received ${stats.bytesReceived}`);
    });

    test('a reconnect recovers the missed documents whole, then deltas resume', async () => {
      const channel = `doc:${format}-recover-${randomUUID()}`;
      const { client, sub, received } = newSubscriber(format, channel);
      client.connect();
      sub.subscribe();
      await waitForEvent(sub, 'subscribed');
      await server.engine.publish({ channel, data: documentAt(1) });
      await waitFor('first document', () => received.length === 1);
      client.disconnect();
      await server.engine.publish({ channel, data: documentAt(2) });
      await server.engine.publish({ channel, data: documentAt(3) });
      const resubscribed = waitForEvent<{ recovered: boolean }>(sub, 'subscribed');
      client.connect();
      assert.equal((await resubscribed).recovered, true);
      await server.engine.publish({ channel, data: documentAt(4) });
      await waitFor('four documents', () => received.length === 4);
      assert.deepEqual(received, [documentAt(1), documentAt(2), documentAt(3), documentAt(4)]);
      assert.ok(sub.deltaStats().numDeltaPayloads >= 1, 'deltas resumed after the recovered documents');
    });
  });
}

describe('negotiation and publishing', () => {
  test('a namespace without allowed_delta_types grants no delta: documents come whole', async () => {
    const channel = `nodelta:${randomUUID()}`;
    const { client, sub, received } = newSubscriber('json', channel);
    client.connect();
    sub.subscribe();
    await waitForEvent(sub, 'subscribed');
    for (let v = 1; v <= 3; v++) await server.engine.publish({ channel, data: documentAt(v) });
    await waitFor('three documents', () => received.length === 3);
    assert.deepEqual(sub.deltaStats().numDeltaPayloads, 0);
  });

  test('without delta_publish only publications with `delta` go as deltas (server API `delta: true`)', async () => {
    const channel = `perpub:${randomUUID()}`;
    const { client, sub, received } = newSubscriber('json', channel);
    client.connect();
    sub.subscribe();
    await waitForEvent(sub, 'subscribed');
    const publish = (data: unknown, delta: boolean) =>
      fetch(`${server.baseUrl}/api/publish`, {
        method: 'POST',
        headers: { 'X-API-Key': 'api-key' },
        body: JSON.stringify({ channel, data, delta }),
      }).then((r) => r.text());
    await publish(documentAt(1), true);
    await publish(documentAt(2), false);
    await publish(documentAt(3), true);
    await waitFor('three documents', () => received.length === 3);
    assert.deepEqual(received, [documentAt(1), documentAt(2), documentAt(3)]);
    assert.equal(sub.deltaStats().numDeltaPayloads, 1);
  });

  test('an unknown delta type is a bad request (close 3501)', async () => {
    const raw = await connectRawClient(server.wsUrl, connectionToken('raw'));
    cleanups.push(() => raw.close());
    raw.send({ id: 2, subscribe: { channel: 'doc:x', delta: 'zstd' } });
    assert.equal(await raw.waitForClose(), 3501);
  });

  test('the subscribe result says `delta: true`; a JSON delta subscriber gets `data` as a string', async () => {
    const raw = await connectRawClient(server.wsUrl, connectionToken('raw'));
    cleanups.push(() => raw.close());
    const channel = `doc:raw-${randomUUID()}`;
    raw.send({ id: 2, subscribe: { channel, delta: 'fossil' } });
    const reply = (await raw.waitForReply(2)).subscribe as { delta?: boolean };
    assert.equal(reply.delta, true);
    await server.engine.publish({ channel, data: documentAt(1) });
    await server.engine.publish({ channel, data: documentAt(2) });
    const pubs = await waitFor('two pushes', () => raw.messages.filter((m) => 'push' in m).length === 2).then(
      () =>
        raw.messages
          .filter((m) => 'push' in m)
          .map((m) => (m.push as { pub: { data: unknown; delta?: boolean } }).pub),
    );
    assert.equal(typeof pubs[0]!.data, 'string');
    assert.deepEqual(JSON.parse(pubs[0]!.data as string), documentAt(1));
    assert.equal(pubs[0]!.delta, undefined);
    assert.equal(pubs[1]!.delta, true);
    assert.ok((pubs[1]!.data as string).length < 100);
  });
});

describe('across nodes (Redis)', () => {
  test('the delta flag travels through Redis: a publication on another node arrives as a delta', async () => {
    const backend = newRedisBackend('test-delta');
    const node = async () => {
      const s = await startTestServer({ namespaces: NAMESPACES, ...backend() });
      cleanups.push(() => s.close());
      return s;
    };
    const a = await node();
    const b = await node();
    const channel = `perpub:${randomUUID()}`;
    const { client, sub, received } = newSubscriber('json', channel, a.wsUrl);
    client.connect();
    sub.subscribe();
    await waitForEvent(sub, 'subscribed');
    for (let v = 1; v <= 3; v++) await b.engine.publish({ channel, data: documentAt(v), delta: true });
    await waitFor('three documents', () => received.length === 3);
    assert.deepEqual(received, [documentAt(1), documentAt(2), documentAt(3)]);
    assert.equal(sub.deltaStats().numDeltaPayloads, 2);
  });
});
