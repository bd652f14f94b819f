/**
 * A node cut off from Redis by a network partition (README "Redis outages"): node A reaches the test Redis through
 * a TCP proxy that the test pauses (a blackhole: nothing crosses, nothing is closed), node B directly. Official
 * `centrifuge` clients on node A. The periodic position check keeps its default (40 s), so anything a client gets
 * within the bounds below came from the broker noticing the partition and its end by itself.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { PausableProxy } from '@parley/testing/pausable-proxy';
import type { PublicationContext, SubscribedContext, SubscribingContext } from 'centrifuge';
import { Redis } from 'ioredis';
import type { NamespaceConfig } from '../engine/namespaces.ts';
import { connectionToken, newClient, startTestServer, type TestServer, waitFor } from '../testing/harness.ts';
import { RedisBroker, RedisPresenceManager } from './redis.ts';

const url = process.env.PARLEY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const redisPort = Number(new URL(url).port || 6379);
/** The contract answers within 2 s; the slack absorbs a loaded 2-core machine. */
const PROMPT_MS = 2_000 + 1_500;
/** Far below the 40 s periodic position check: only the broker's own notice can explain a resync this soon. */
const RESYNC_BOUND_MS = 10_000;
const NAMESPACE: NamespaceConfig = {
  name: 'chat',
  force_recovery: true,
  history_size: 100,
  history_ttl: '1h',
  allow_subscribe_for_client: true,
  allow_publish_for_client: true,
};

describe('redis partition of one node', () => {
  const prefix = `partition-${randomUUID().slice(0, 8)}`;
  const cleanups: Array<() => Promise<void> | void> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    const admin = new Redis(url);
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.unlink(...keys);
    await admin.quit();
  });

  async function startNode(redisUrl: string, options: { idle?: boolean } = {}): Promise<TestServer> {
    const node = await startTestServer({
      broker: new RedisBroker({ url: redisUrl, prefix }),
      presenceManager: new RedisPresenceManager({ url: redisUrl, prefix }),
      closeBroker: true,
      namespaces: [NAMESPACE],
      // An idle node: not even the cluster heartbeat goes through Redis during the test.
      ...(options.idle ? { nodeHeartbeatIntervalMs: 600_000 } : {}),
    });
    cleanups.push(() => node.close());
    await waitFor('node healthy', () => node.engine.healthy(), 5_000);
    return node;
  }

  async function startProxy(): Promise<PausableProxy> {
    const proxy = new PausableProxy(redisPort);
    await proxy.listen();
    cleanups.push(() => proxy.close());
    return proxy;
  }

  function watch(node: TestServer, user: string, channel: string) {
    const client = newClient(node.wsUrl, { token: connectionToken(user) });
    cleanups.push(() => client.disconnect());
    const sub = client.newSubscription(channel);
    const texts: string[] = [];
    const subscribing: SubscribingContext[] = [];
    const subscribed: SubscribedContext[] = [];
    sub.on('publication', (ctx: PublicationContext) => texts.push((ctx.data as { text: string }).text));
    sub.on('subscribing', (ctx) => subscribing.push(ctx));
    sub.on('subscribed', (ctx) => subscribed.push(ctx));
    client.connect();
    sub.subscribe();
    return { client, sub, texts, subscribing, subscribed };
  }

  it('notices the partition of an idle node, and refuses publishes at once instead of waiting on Redis', async () => {
    const proxy = await startProxy();
    const nodeA = await startNode(proxy.url, { idle: true });
    const alice = watch(nodeA, 'alice', 'chat:idle');
    await waitFor('alice subscribed', () => alice.subscribed.length === 1, 5_000);

    proxy.pause();
    // Nothing is sent on an idle node's connections: only its keep-alive can tell the link is gone (and /readyz
    // must say so while it is).
    await waitFor('node A reports the broker unhealthy', () => !nodeA.engine.healthy(), PROMPT_MS);
    const sentAt = Date.now();
    const answers = await Promise.allSettled(
      [1, 2, 3, 4].map((n) => alice.client.publish('chat:idle', { text: `during ${n}` })),
    );
    const answeredAfter = Date.now() - sentAt;
    for (const answer of answers) {
      assert.equal(answer.status, 'rejected');
      const error = (answer as PromiseRejectedResult).reason as { code?: number; temporary?: boolean };
      assert.deepEqual([error.code, error.temporary], [503, true]);
    }
    assert.ok(answeredAfter < PROMPT_MS, `four publishes answered after ${answeredAfter} ms`);

    proxy.resume();
    await waitFor('node A healthy again', () => nodeA.engine.healthy(), RESYNC_BOUND_MS);
    await alice.client.publish('chat:idle', { text: 'after' });
    await waitFor('the publication after the partition', () => alice.texts.includes('after'), 5_000);
  });

  it('tells subscribers to recover (2500) what other nodes published while it was cut off', async () => {
    const proxy = await startProxy();
    const nodeA = await startNode(proxy.url);
    const nodeB = await startNode(url);
    const alice = watch(nodeA, 'alice', 'chat:room');
    await waitFor('alice subscribed', () => alice.subscribed.length === 1, 5_000);
    await nodeB.engine.publish({ channel: 'chat:room', data: { text: 'before' } });
    await waitFor('the publication before the partition', () => alice.texts.includes('before'), 5_000);

    proxy.pause();
    const during = ['during 1', 'during 2', 'during 3'];
    for (const text of during) await nodeB.engine.publish({ channel: 'chat:room', data: { text } });
    await waitFor('node A notices the partition', () => !nodeA.engine.healthy(), 5_000);
    // A partition its connections did not survive: what Redis sent node A meanwhile is gone with them.
    proxy.resume({ reset: true });

    // Nothing more is published: the broker's return alone must bring the client up to date.
    await waitFor(
      'alice shows what node B published during the partition',
      () => during.every((text) => alice.texts.includes(text)),
      RESYNC_BOUND_MS,
    );
    assert.deepEqual(alice.texts, ['before', ...during], 'in order, each once');
    assert.equal(alice.subscribing.at(-1)?.code, 2500, 'told to resubscribe: insufficient state');
    assert.equal(alice.subscribed.at(-1)?.recovered, true, 'and recovered from history');
  });
});
