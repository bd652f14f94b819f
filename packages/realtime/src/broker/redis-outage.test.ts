/**
 * A Redis outage with everything else real: two engines on one private `redis-server` (a child process on a free
 * port, never the shared Redis), official `centrifuge` clients and a raw WebSocket client. Redis is killed and
 * started again on the same port while the engines and clients keep running (README "Redis outages").
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { after, describe, it } from 'node:test';
import type {
  Centrifuge,
  PublicationContext,
  SubscribedContext,
  Subscription,
  SubscriptionErrorContext,
} from 'centrifuge';
import { Redis } from 'ioredis';
import type { NamespaceConfig } from '../engine/namespaces.ts';
import {
  connectionToken,
  connectRawClient,
  newClient,
  startTestServer,
  type TestServer,
  waitFor,
  waitForEvent,
} from '../testing/harness.ts';
import { BrokerError } from './errors.ts';
import { RedisBroker, RedisPresenceManager } from './redis.ts';

/** The contract: a publish fails within 2 s while Redis is away; the slack absorbs a loaded 2-core machine. */
const PROMPT_FAILURE_MS = 2_000 + 1_500;
const CHANNEL = 'chat:outage';
/** A channel whose only subscriber leaves during the outage. */
const LEFT_CHANNEL = 'chat:left';
const PREFIX = 'outage';
const NAMESPACE: NamespaceConfig = {
  name: 'chat',
  presence: true,
  force_recovery: true,
  history_size: 100,
  history_ttl: '1h',
  allow_subscribe_for_client: true,
  allow_publish_for_client: true,
  allow_presence_for_subscriber: true,
};

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A throw-away Redis without persistence: a restart loses every stream, as a crashed Redis would. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  await waitFor(
    'redis-server ready',
    () => output.includes('Ready to accept connections') || child.exitCode !== null,
    10_000,
  );
  assert.equal(child.exitCode, null, `redis-server exited: ${output}`);
  return child;
}

async function killRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

/** Settles like `promise`, or rejects when it has not settled within `ms` (a hang fails the test, bounded). */
function waitForSettled<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

interface Watched {
  client: Centrifuge;
  sub: Subscription;
  subscribed: SubscribedContext[];
  publications: unknown[];
}

describe('redis outage', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  const processFailures: unknown[] = [];
  const recordFailure = (error: unknown): void => {
    processFailures.push(error);
  };
  process.on('unhandledRejection', recordFailure);
  process.on('uncaughtException', recordFailure);
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    process.off('unhandledRejection', recordFailure);
    process.off('uncaughtException', recordFailure);
  });

  it('fails publishes at once while Redis is away and recovers by itself when it returns', async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    let redis = await startRedis(port);
    cleanups.push(() => killRedis(redis));
    const connectionErrors: Error[] = [];

    async function startNode(): Promise<TestServer> {
      const onError = (error: Error): void => {
        connectionErrors.push(error);
      };
      const node = await startTestServer({
        broker: new RedisBroker({ url, prefix: PREFIX, onError }),
        presenceManager: new RedisPresenceManager({ url, prefix: PREFIX, onError }),
        closeBroker: true,
        namespaces: [NAMESPACE],
        // Quiet channels are checked against the stream top soon, so a lost stream is noticed without a publish.
        channelPositionCheckDelayMs: 300,
      });
      cleanups.push(() => node.close());
      await waitFor('node healthy', () => node.engine.healthy(), 5_000);
      return node;
    }

    /** A client on `node` subscribing to `channel`; the retry delays are short so a retry is soon observable. */
    function watcher(node: TestServer, user: string, channel = CHANNEL): Watched {
      const client = newClient(node.wsUrl, { token: connectionToken(user) });
      cleanups.push(() => client.disconnect());
      const sub = client.newSubscription(channel, { minResubscribeDelay: 100, maxResubscribeDelay: 500 });
      const watched: Watched = { client, sub, subscribed: [], publications: [] };
      sub.on('subscribed', (ctx) => watched.subscribed.push(ctx));
      sub.on('publication', (ctx: PublicationContext) => watched.publications.push(ctx.data));
      client.connect();
      sub.subscribe();
      return watched;
    }

    async function watch(node: TestServer, user: string, channel = CHANNEL): Promise<Watched> {
      const watched = watcher(node, user, channel);
      await waitFor(`${user} subscribed`, () => watched.subscribed.length === 1, 5_000);
      return watched;
    }

    const saidText = (text: string) => (watched: Watched) =>
      watched.publications.some((data) => (data as { text?: string }).text === text);

    const first = await startNode();
    const second = await startNode();
    const alice = await watch(first, 'alice');
    const bob = await watch(second, 'bob');
    const dave = await watch(second, 'dave', LEFT_CHANNEL);
    const raw = await connectRawClient(first.wsUrl, connectionToken('raw'));
    cleanups.push(() => raw.close());

    await alice.client.publish(CHANNEL, { text: 'before' });
    await waitFor(
      'publication before the outage on both nodes',
      () => alice.publications.length === 1 && bob.publications.length === 1,
      5_000,
    );
    const epochBefore = alice.subscribed[0]!.streamPosition?.epoch;
    assert.ok(epochBefore, 'the positioned subscription has an epoch');

    // ---- Redis goes away ------------------------------------------------------------------------------------
    await killRedis(redis);
    await waitFor(
      'both nodes report the broker unhealthy',
      () => !first.engine.healthy() && !second.engine.healthy(),
      5_000,
    );
    assert.equal(first.engine.broker.healthy(), false);
    assert.equal(first.engine.presenceManager.healthy(), false);

    await assert.rejects(
      waitForSettled(alice.client.publish(CHANNEL, { text: 'during' }), PROMPT_FAILURE_MS, 'client publish'),
      (error: { code?: number; temporary?: boolean }) => error.code === 503 && error.temporary === true,
    );
    raw.send({ id: 2, publish: { channel: CHANNEL, data: { text: 'raw during' } } });
    const reply = await raw.waitForReply(2, PROMPT_FAILURE_MS);
    assert.deepEqual(reply, {
      id: 2,
      error: { code: 503, message: 'broker unavailable', temporary: true },
    });
    const isUnavailable = (error: unknown) =>
      error instanceof BrokerError && error.code === 'broker_unavailable';
    await assert.rejects(
      waitForSettled(
        first.engine.publish({ channel: CHANNEL, data: { text: 'server' } }),
        PROMPT_FAILURE_MS,
        'publish()',
      ),
      isUnavailable,
    );
    await assert.rejects(
      waitForSettled(second.engine.presence(CHANNEL), PROMPT_FAILURE_MS, 'presence()'),
      isUnavailable,
    );
    const api = await waitForSettled(
      fetch(`${first.baseUrl}/api/publish`, {
        method: 'POST',
        headers: { 'X-API-Key': 'api-key', 'X-Centrifugo-Error-Mode': 'transport' },
        body: JSON.stringify({ channel: CHANNEL, data: { text: 'api' } }),
      }),
      PROMPT_FAILURE_MS,
      'server HTTP API publish',
    );
    assert.equal(api.status, 503);
    assert.deepEqual(await api.json(), { code: 503, message: 'broker unavailable' });
    // Failed reconnects are reported to the listeners, not thrown: every connection has an 'error' listener.
    await waitFor('reconnect errors reach onError', () => connectionErrors.length > 0, 5_000);
    assert.equal(alice.client.state, 'connected', 'clients stay connected through the outage');

    // Subscribing needs the broker: a temporary error, which the client retries by itself.
    const carol = watcher(first, 'carol');
    const carolError = await waitForEvent<SubscriptionErrorContext>(carol.sub, 'error', PROMPT_FAILURE_MS);
    assert.equal(carolError.error.code, 503);
    // The SDK passes the reply's `temporary` flag on, though its `Error` type does not declare it.
    assert.equal((carolError.error as { temporary?: boolean }).temporary, true);
    // Leaving a channel while Redis is away must not bring its Redis subscription back after the reconnect.
    dave.sub.unsubscribe();
    await waitFor('the left channel is gone locally', () => second.engine.stats().channels === 1, 5_000);

    // ---- Redis returns, empty (no persistence) --------------------------------------------------------------
    redis = await startRedis(port);
    await waitFor(
      'both nodes healthy again without a restart',
      () => first.engine.healthy() && second.engine.healthy(),
      10_000,
    );

    // The streams are gone: the next position check sees a new epoch, the subscribers are told to resubscribe
    // (2500) and get `recovered: false`, so the application knows to reload what it shows.
    await waitFor(
      'both subscribers resubscribed after the epoch change',
      () => alice.subscribed.length >= 2 && bob.subscribed.length >= 2,
      10_000,
    );
    await waitFor('the retried subscription succeeds', () => carol.subscribed.length === 1, 10_000);
    for (const { subscribed } of [alice, bob]) {
      const again = subscribed.at(-1)!;
      assert.equal(again.wasRecovering, true);
      assert.equal(again.recovered, false);
      assert.notEqual(again.streamPosition?.epoch, epochBefore, 'a new epoch');
    }

    await waitForSettled(
      alice.client.publish(CHANNEL, { text: 'after' }),
      PROMPT_FAILURE_MS,
      'publish after restart',
    );
    await waitFor(
      'the publication after the restart reaches subscribers on both nodes',
      () => [alice, bob, carol].every(saidText('after')),
      5_000,
    );
    const admin = new Redis(url);
    cleanups.push(() => void admin.disconnect());
    const numsub = (await admin.pubsub(
      'NUMSUB',
      `${PREFIX}.client.${CHANNEL}`,
      `${PREFIX}.client.${LEFT_CHANNEL}`,
    )) as [string, number, string, number];
    assert.equal(numsub[1], 2, 'each node subscribed the channel with local subscribers again');
    assert.equal(numsub[3], 0, 'the channel left during the outage stays unsubscribed');
    const events = waitForEvent(raw.ws, 'close', 5_000);
    await second.engine.disconnectUser('raw', { code: 4000 });
    await events;
    assert.equal(raw.closeCode, 4000, 'control messages cross the nodes again');
    assert.deepEqual(processFailures, [], 'no unhandled rejection or exception');
  });
});

describe('redis outage: a restore that fails once', () => {
  it('keeps restoring the subscriptions of a new connection until they hold', async () => {
    const port = await freePort();
    let redis = await startRedis(port);
    const broker = new RedisBroker({ url: `redis://127.0.0.1:${port}`, prefix: 'restore' });
    const received: string[] = [];
    try {
      await broker.run({
        onPublication: (channel) => received.push(channel),
        onJoin: () => {},
        onLeave: () => {},
        onControl: () => {},
      });
      await broker.subscribe(['chat:kept']);
      // The first SUBSCRIBE on the next connection fails, as it does when Redis answers too slowly right after
      // a restart (the command times out); the real client does everything else.
      const subscriber = (broker as unknown as { subscriber: Redis }).subscriber;
      const subscribe = subscriber.subscribe.bind(subscriber);
      let failures = 1;
      subscriber.subscribe = ((...channels: string[]) =>
        failures-- > 0
          ? Promise.reject(new Error('Command timed out'))
          : subscribe(...channels)) as typeof subscribe;
      await killRedis(redis);
      redis = await startRedis(port);
      await waitFor('the broker to be healthy again', () => broker.healthy(), 10_000);
      await broker.publish({ channel: 'chat:kept', data: '{}' });
      await waitFor('the publication on the kept channel', () => received.includes('chat:kept'), 5_000);
      assert.equal(failures, -1, 'the failing SUBSCRIBE did happen');
    } finally {
      await broker.close();
      await killRedis(redis);
    }
  });
});
