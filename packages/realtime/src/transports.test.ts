import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Centrifuge, type Options } from 'centrifuge';
import { Centrifuge as CentrifugeProtobuf } from 'centrifuge/build/protobuf';
import { EventSource } from 'eventsource';
import WebSocket from 'ws';
import type { RealtimeEngineOptions } from './engine/options.ts';
import {
  closedAfterAll,
  connectionToken,
  newMemoryBackend,
  newRedisBackend,
  startTestServer,
  subscriptionToken,
  type TestServer,
  waitFor,
  waitForEvent,
} from './testing/harness.ts';

/**
 * The official `centrifuge` client over every transport and both formats (docs/protocol.md "Transport",
 * "Bidirectional emulation", "Protobuf"): WebSocket JSON and Protobuf, HTTP-streaming JSON and Protobuf, SSE (JSON),
 * on the memory and the Redis broker. Emulation runs on two nodes sharing the broker: the stream is held by one
 * node and every `/emulation` request goes to the other, which hands it on through the broker's control channel.
 */

const cleanups = closedAfterAll();
const NAMESPACES: RealtimeEngineOptions['namespaces'] = [
  {
    name: 'room',
    history_size: 20,
    history_ttl: '60s',
    force_recovery: true,
    presence: true,
    join_leave: true,
    force_push_join_leave: true,
    allow_publish_for_subscriber: true,
    allow_history_for_subscriber: true,
    allow_presence_for_subscriber: true,
  },
];

type Format = 'json' | 'protobuf';
type TransportName = 'websocket' | 'http_stream' | 'sse';

interface Cluster {
  /** Node holding the connections. */
  a: TestServer;
  /** Node receiving the `/emulation` requests. */
  b: TestServer;
}

/** Two nodes on one broker: an in-process hub, or one Redis under a fresh prefix. */
async function startCluster(broker: 'memory' | 'redis'): Promise<Cluster> {
  const backend = broker === 'memory' ? newMemoryBackend() : newRedisBackend('test-transports');
  const node = () =>
    startTestServer({
      namespaces: NAMESPACES,
      nodeHeartbeatIntervalMs: 200,
      hooks: { onRpc: ({ method, data }) => ({ method, data }) },
      ...backend(),
    });
  const a = await node();
  cleanups.push(() => a.close());
  const b = await node();
  cleanups.push(() => b.close());
  // Each node must know the other before it can route emulation requests to it.
  await waitForNodes(a, b);
  return { a, b };
}

function waitForNodes(...servers: TestServer[]): Promise<void> {
  return waitFor(
    'the nodes to see each other',
    () => servers.every((s) => s.engine.info().nodes.length >= servers.length),
    10_000,
  );
}

function clientFor(cluster: Cluster, transport: TransportName, format: Format, user: string): Centrifuge {
  const Client = (format === 'protobuf' ? CentrifugeProtobuf : Centrifuge) as typeof Centrifuge;
  const options: Partial<Options> = {
    token: connectionToken(user),
    timeout: 5_000,
    websocket: WebSocket,
    fetch,
    readableStream: ReadableStream,
    eventsource: EventSource,
    // The stream is opened on node a, commands go to node b.
    emulationEndpoint: cluster.b.emulationUrl,
  };
  const endpoints: Record<TransportName, string> = {
    websocket: cluster.a.wsUrl,
    http_stream: cluster.a.httpStreamUrl,
    sse: cluster.a.sseUrl,
  };
  const client = new Client([{ transport, endpoint: endpoints[transport] }], options);
  cleanups.push(() => client.disconnect());
  return client;
}

/** Publication data as the app sees it: Protobuf clients get and give bytes (JSON text here). */
function encodeData(format: Format, value: unknown): unknown {
  return format === 'protobuf' ? new TextEncoder().encode(JSON.stringify(value)) : value;
}

function decodeData(format: Format, data: unknown): unknown {
  return format === 'protobuf' ? JSON.parse(new TextDecoder().decode(data as Uint8Array)) : data;
}

const MATRIX: Array<{ transport: TransportName; format: Format }> = [
  { transport: 'websocket', format: 'json' },
  { transport: 'websocket', format: 'protobuf' },
  { transport: 'http_stream', format: 'json' },
  { transport: 'http_stream', format: 'protobuf' },
  { transport: 'sse', format: 'json' },
];

for (const broker of ['memory', 'redis'] as const) {
  describe(`official client on the ${broker} broker`, () => {
    let cluster: Cluster | undefined;

    for (const { transport, format } of MATRIX) {
      test(`${transport} ${format}: connect, subscribe, publish, presence, history, rpc, recover`, async () => {
        cluster ??= await startCluster(broker);
        const user = `${transport}-${format}`;
        const channel = `room:${user}-${broker}`;
        const client = clientFor(cluster, transport, format, user);
        const connected = waitForEvent<{ transport: string }>(client, 'connected');
        client.connect();
        assert.equal((await connected).transport, transport);
        const sub = client.newSubscription(channel, {
          getToken: async () => subscriptionToken(user, channel),
        });
        const subscribed = waitForEvent(sub, 'subscribed');
        sub.subscribe();
        await subscribed;

        // A client publication (through /emulation on node b for emulation) comes back to the publisher.
        const own = waitForEvent<{ data: unknown; offset: number }>(sub, 'publication');
        await sub.publish(encodeData(format, { text: 'from client' }));
        const first = await own;
        assert.deepEqual(decodeData(format, first.data), { text: 'from client' });
        assert.equal(first.offset, 1);

        // A server publication on the other node reaches the stream held by node a.
        const fromServer = waitForEvent<{ data: unknown }>(sub, 'publication');
        await cluster.b.engine.publish({ channel, data: { text: 'from server' } });
        assert.deepEqual(decodeData(format, (await fromServer).data), { text: 'from server' });

        const stats = await sub.presenceStats();
        assert.deepEqual(stats, { numClients: 1, numUsers: 1 });
        const presence = await sub.presence();
        assert.deepEqual(
          Object.values(presence.clients).map((c) => c.user),
          [user],
        );
        const history = await sub.history({ limit: 10 });
        assert.equal(history.publications.length, 2);
        assert.equal(history.offset, 2);
        const rpc = await client.rpc('echo', encodeData(format, { n: 1 }));
        assert.deepEqual(decodeData(format, rpc.data), { method: 'echo', data: { n: 1 } });

        // A dropped connection resubscribes and recovers what it missed meanwhile.
        client.disconnect();
        await cluster.b.engine.publish({ channel, data: { text: 'missed' } });
        const recovered = waitForEvent<{ data: unknown; offset: number }>(sub, 'publication');
        const resubscribed = waitForEvent<{ recovered: boolean; wasRecovering: boolean }>(sub, 'subscribed');
        client.connect();
        const again = await resubscribed;
        assert.equal(again.wasRecovering, true);
        assert.equal(again.recovered, true);
        const missed = await recovered;
        assert.deepEqual(decodeData(format, missed.data), { text: 'missed' });
        assert.equal(missed.offset, 3);
        if (transport !== 'websocket') {
          // Every command after connect went to node b, none to the node holding the stream.
          assert.ok(cluster.b.requests.includes('POST /emulation'));
          assert.ok(!cluster.a.requests.includes('POST /emulation'));
        }
      });
    }
  });
}

describe('emulation edges', () => {
  test('a server disconnect reaches an HTTP-streaming client as a disconnect push (terminal code kept)', async () => {
    const cluster = await startCluster('memory');
    const client = clientFor(cluster, 'http_stream', 'json', 'leaving');
    client.connect();
    await waitForEvent(client, 'connected');
    const disconnected = waitForEvent<{ code: number; reason: string }>(client, 'disconnected');
    await cluster.b.engine.disconnectUser('leaving', { code: 4501, reason: 'go away' });
    assert.deepEqual(await disconnected, { code: 4501, reason: 'go away' });
  });

  test('/emulation: unknown node 404, malformed body 400, unknown session on a known node 204', async () => {
    const cluster = await startCluster('memory');
    const post = (body: string) =>
      fetch(cluster.b.emulationUrl, {
        method: 'POST',
        body,
        headers: { 'Content-Type': 'application/json' },
      });
    assert.equal((await post(JSON.stringify({ node: 'nope', session: 's', data: '{}' }))).status, 404);
    assert.equal((await post('{not json')).status, 400);
    const nodeA = cluster.a.engine.nodeId;
    assert.equal((await post(JSON.stringify({ node: nodeA, session: 'gone', data: '{}' }))).status, 204);
  });

  test('an Origin the policy refuses gets 403 on the stream; a preflight is answered with CORS headers', async () => {
    const cluster = await startCluster('memory');
    const refused = await fetch(cluster.a.httpStreamUrl, {
      method: 'POST',
      headers: { Origin: 'https://evil.example', 'Content-Type': 'application/json' },
      body: '{"id":1,"connect":{}}',
    });
    assert.equal(refused.status, 403);
    await refused.body?.cancel();
    const preflight = await fetch(cluster.a.httpStreamUrl, {
      method: 'OPTIONS',
      headers: { Origin: `http://127.0.0.1:${new URL(cluster.a.httpStreamUrl).port}` },
    });
    assert.equal(preflight.status, 204);
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
  });
});
