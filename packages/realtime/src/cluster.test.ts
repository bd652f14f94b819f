/**
 * Several engines sharing one backend behave as one server (docs/protocol.md "Cluster"): publications,
 * presence and server API commands cross nodes, and a client that moves to another node recovers what it
 * missed (docs/protocol.md "Recovery"). The same suite runs on the in-process memory hub and on Redis. Real
 * engines on 127.0.0.1 ephemeral ports, the official `centrifuge` client over `ws`.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import {
  type AddressInfo,
  createServer as createTcpServer,
  type Socket,
  connect as tcpConnect,
} from 'node:net';
import { after, describe, it } from 'node:test';
import type { Centrifuge, PublicationContext } from 'centrifuge';
import { Redis } from 'ioredis';
import { MemoryBroker, MemoryHub, MemoryPresenceManager } from './broker/memory.ts';
import { RedisBroker, RedisPresenceManager } from './broker/redis.ts';
import type { Broker, PresenceManager } from './broker/types.ts';
import { silentLogger } from './engine/logger.ts';
import { createRealtimeEngine, type RealtimeEngine } from './index.ts';
import { connectionToken, connectRawClient, newClient, SECRET, waitFor } from './testing/harness.ts';

const redisUrl = process.env.PARLEY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const API_KEY = 'cluster-api-key';
/** Every key and PUB/SUB channel of this file lives under this prefix; removed when the file is done. */
const prefix = `parleytest-cluster-${randomUUID().slice(0, 8)}`;

interface NodeBackend {
  broker: Broker;
  presenceManager: PresenceManager;
}

/** One backend for the cluster suite: `runClusterContract(factory)` runs every test against it. */
interface ClusterFactory {
  /** Names the backend in test names. */
  name: string;
  /** A fresh shared backend; each call of the returned function makes the broker and presence of one node. */
  newBackend(): () => NodeBackend;
}

const MEMORY_HUB: ClusterFactory = {
  name: 'one memory hub',
  newBackend() {
    const hub = new MemoryHub();
    return () => ({ broker: new MemoryBroker({ hub }), presenceManager: new MemoryPresenceManager({ hub }) });
  },
};

const REDIS: ClusterFactory = {
  name: 'one Redis',
  newBackend() {
    return () => ({
      broker: new RedisBroker({ url: redisUrl, prefix }),
      presenceManager: new RedisPresenceManager({ url: redisUrl, prefix }),
    });
  },
};

interface ClusterNode {
  engine: RealtimeEngine;
  server: Server;
  port: number;
  wsUrl: string;
  close(): Promise<void>;
}

async function startNode(backend: NodeBackend): Promise<ClusterNode> {
  const engine = await createRealtimeEngine({
    ...backend,
    closeBroker: true,
    token: { hmacSecretKeys: [SECRET] },
    apiKey: API_KEY,
    logger: silentLogger,
    nodeHeartbeatIntervalMs: 500,
    namespaces: [
      {
        name: 'chat',
        presence: true,
        join_leave: true,
        force_push_join_leave: true,
        force_recovery: true,
        history_size: 100,
        history_ttl: '1h',
        allow_subscribe_for_client: true,
        allow_publish_for_subscriber: true,
        allow_presence_for_subscriber: true,
        allow_history_for_subscriber: true,
      },
    ],
  });
  const server = createServer((request, response) => {
    engine.apiHandler(request, response).then((handled) => {
      if (!handled) response.writeHead(404).end();
    });
  });
  engine.attach(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    engine,
    server,
    port,
    wsUrl: `ws://127.0.0.1:${port}/connection/websocket`,
    close() {
      closed ??= (async () => {
        await engine.close({ timeoutMs: 1_000 });
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      })();
      return closed;
    },
  };
}

/**
 * A TCP load balancer in front of the nodes: new connections go to `target`, or are refused while it is unset
 * (a node being drained). This is how a real client "moves" between nodes without changing its URL.
 */
class Balancer {
  target: number | undefined;
  private readonly server = createTcpServer((socket) => this.route(socket));
  private readonly sockets = new Set<Socket>();

  async listen(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}/connection/websocket`;
  }

  private route(socket: Socket): void {
    if (this.target === undefined) {
      socket.destroy();
      return;
    }
    const upstream = tcpConnect(this.target, '127.0.0.1');
    for (const s of [socket, upstream]) {
      this.sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        this.sockets.delete(s);
        socket.destroy();
        upstream.destroy();
      });
    }
    socket.pipe(upstream).pipe(socket);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

async function api(node: ClusterNode, method: string, body: object): Promise<Record<string, unknown>> {
  const response = await fetch(`http://127.0.0.1:${node.port}/api/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 200, `${method} answered ${response.status}`);
  const reply = (await response.json()) as { result?: Record<string, unknown>; error?: unknown };
  assert.equal(reply.error, undefined, `${method} failed: ${JSON.stringify(reply.error)}`);
  return reply.result ?? {};
}

/** Subscribes and records every publication's `n` and offset, in arrival order. */
async function subscribeRecording(client: Centrifuge, channel: string) {
  const received: { n: number; offset: number | undefined }[] = [];
  const subscribed: { wasRecovering: boolean; recovered: boolean }[] = [];
  const sub = client.newSubscription(channel);
  sub.on('publication', (ctx: PublicationContext) => {
    received.push({ n: (ctx.data as { n: number }).n, offset: ctx.offset });
  });
  sub.on('subscribed', (ctx) =>
    subscribed.push({ wasRecovering: ctx.wasRecovering, recovered: ctx.recovered }),
  );
  sub.subscribe();
  await waitFor(`subscribed to ${channel}`, () => subscribed.length > 0);
  return { sub, received, subscribed };
}

const nodes: ClusterNode[] = [];
const clients: Centrifuge[] = [];
const admin = new Redis(redisUrl);

after(async () => {
  for (const client of clients) client.disconnect();
  await Promise.all(nodes.map((node) => node.close()));
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await admin.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
  await admin.quit();
});

/** Starts `count` engines on one fresh backend of `factory`; they are closed when the file is done. */
async function startCluster(factory: ClusterFactory, count: number): Promise<ClusterNode[]> {
  const newNodeBackend = factory.newBackend();
  const started = await Promise.all(Array.from({ length: count }, () => startNode(newNodeBackend())));
  nodes.push(...started);
  return started;
}

function connectClient(url: string, user: string): Centrifuge {
  const c = newClient(url, { token: connectionToken(user), minReconnectDelay: 100, maxReconnectDelay: 400 });
  clients.push(c);
  c.connect();
  return c;
}

function channelName(label: string): string {
  return `chat:${label}.${randomUUID().slice(0, 8)}`;
}

function runClusterContract(factory: ClusterFactory): void {
  describe(`cluster: engines sharing ${factory.name} act as one server`, () => {
    it('delivers a publication made on one node to clients on every node', async () => {
      const [a, b, c] = await startCluster(factory, 3);
      const channel = channelName('fanout');
      const onB = await subscribeRecording(connectClient(b!.wsUrl, 'bob'), channel);
      const onC = await subscribeRecording(connectClient(c!.wsUrl, 'carol'), channel);
      const publisher = connectClient(a!.wsUrl, 'alice');
      const fromA = await subscribeRecording(publisher, channel);

      await fromA.sub.publish({ n: 1 }); // client publish on A
      await api(c!, 'publish', { channel, data: { n: 2 } }); // server API publish on C
      for (const r of [onB, onC, fromA]) {
        await waitFor('both publications on every node', () => r.received.length === 2);
        assert.deepEqual(r.received, [
          { n: 1, offset: 1 },
          { n: 2, offset: 2 },
        ]);
      }
    });

    it('shares presence and join/leave across nodes', async () => {
      const [a, b] = await startCluster(factory, 2);
      const channel = channelName('presence');
      const onA = await subscribeRecording(connectClient(a!.wsUrl, 'ann'), channel);
      const joinsSeenOnA: string[] = [];
      const leavesSeenOnA: string[] = [];
      onA.sub.on('join', (ctx) => joinsSeenOnA.push(ctx.info.user));
      onA.sub.on('leave', (ctx) => leavesSeenOnA.push(ctx.info.user));
      const onB = await subscribeRecording(connectClient(b!.wsUrl, 'ben'), channel);
      await waitFor('join from node B', () => joinsSeenOnA.includes('ben'));

      const presence = await onA.sub.presence();
      assert.deepEqual(
        Object.values(presence.clients)
          .map((info) => info.user)
          .sort(),
        ['ann', 'ben'],
      );
      assert.deepEqual(await onB.sub.presenceStats(), { numClients: 2, numUsers: 2 });
      const viaApi = await api(b!, 'presence_stats', { channel });
      assert.deepEqual(viaApi, { num_clients: 2, num_users: 2 });

      onB.sub.unsubscribe();
      await waitFor('leave from node B', () => leavesSeenOnA.includes('ben'));
      let stats = await onA.sub.presenceStats();
      await waitFor('presence on node A without ben', async () => {
        stats = await onA.sub.presenceStats();
        return stats.numClients === 1;
      });
      assert.deepEqual(stats, { numClients: 1, numUsers: 1 });
    });

    it('lets the server API on one node disconnect and unsubscribe a client connected to another', async () => {
      const [a, b] = await startCluster(factory, 2);
      const channel = channelName('api');
      const dora = connectClient(b!.wsUrl, 'dora');
      const { sub } = await subscribeRecording(dora, channel);
      const unsubscribed: { code: number }[] = [];
      sub.on('unsubscribed', (ctx) => unsubscribed.push({ code: ctx.code }));

      await api(a!, 'unsubscribe', { user: 'dora', channel });
      await waitFor('server unsubscribe on node B', () => unsubscribed.length === 1);
      assert.equal(unsubscribed[0]?.code, 2000);
      assert.equal(sub.state, 'unsubscribed');

      const disconnected: { code: number }[] = [];
      dora.on('disconnected', (ctx) => disconnected.push({ code: ctx.code }));
      await api(a!, 'disconnect', { user: 'dora' });
      await waitFor('server disconnect on node B', () => disconnected.length === 1);
      assert.equal(disconnected[0]?.code, 3503);
      assert.equal(dora.state, 'disconnected');
    });

    it('recovers exactly the missed publications, in order, once, when a client moves to another node', async () => {
      const [a, b] = await startCluster(factory, 2);
      const balancer = new Balancer();
      const url = await balancer.listen();
      try {
        balancer.target = a!.port;
        const channel = channelName('move');
        const mover = connectClient(url, 'mia');
        const { received, subscribed } = await subscribeRecording(mover, channel);
        assert.deepEqual(subscribed, [{ wasRecovering: false, recovered: false }]);

        for (let n = 1; n <= 3; n++) await api(b!, 'publish', { channel, data: { n } });
        await waitFor('live publications through node A', () => received.length === 3);

        // Drain A: the balancer stops routing to it, then A shuts down gracefully (3001 → the client
        // reconnects).
        balancer.target = undefined;
        const closingA = a!.close();
        await waitFor('the client to notice the shutdown', () => mover.state === 'connecting');
        for (let n = 4; n <= 6; n++) await api(b!, 'publish', { channel, data: { n } });
        await closingA;
        balancer.target = b!.port;

        await waitFor('resubscribe on node B', () => subscribed.length === 2);
        assert.deepEqual(subscribed[1], { wasRecovering: true, recovered: true });
        await waitFor('recovered publications', () => received.length === 6);
        for (let n = 7; n <= 8; n++) await api(b!, 'publish', { channel, data: { n } });
        await waitFor('live publications through node B', () => received.length >= 8);
        // One more behind them: a duplicate of any earlier one would have arrived before it (one ordered stream).
        await api(b!, 'publish', { channel, data: { n: 9 } });
        await waitFor('the last publication', () => received.some((p) => (p as { n: number }).n === 9));
        assert.deepEqual(
          received,
          Array.from({ length: 9 }, (_, i) => ({ n: i + 1, offset: i + 1 })),
        );
      } finally {
        await balancer.close();
      }
    });

    it('keeps delivering to a client that subscribes again while its node is still unsubscribing the channel', async () => {
      // The last subscriber leaves and comes back before the node's broker unsubscribe has completed, as a client
      // told to resubscribe (2500) after a Redis restart does within a millisecond. Unsubscribe and subscribe go in
      // one frame, so the second arrives while the first's broker call is surely still in flight.
      const [a, b] = await startCluster(factory, 2);
      const channel = channelName('comeback');
      const raw = await connectRawClient(a!.wsUrl, connectionToken('rita'));
      try {
        raw.send({ id: 2, subscribe: { channel } });
        await raw.waitForReply(2);
        raw.send({ id: 3, unsubscribe: { channel } }, { id: 4, subscribe: { channel } });
        assert.equal((await raw.waitForReply(4)).error, undefined, 'subscribed again');

        await api(b!, 'publish', { channel, data: { n: 1 } });
        const delivered = await raw.waitForMessage((m) => {
          const push = m.push as { channel?: string; pub?: { data?: { n?: number } } } | undefined;
          return push?.channel === channel && push.pub?.data?.n === 1;
        }, 3_000);
        assert.ok(delivered, 'the publication made on another node reaches the client');
      } finally {
        raw.close();
      }
    });
  });
}

runClusterContract(MEMORY_HUB);
runClusterContract(REDIS);
