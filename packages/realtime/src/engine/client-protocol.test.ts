import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Centrifuge, Subscription } from 'centrifuge';
import WebSocket from 'ws';
import { ClientError } from '../protocol/errors.ts';
import {
  connectionToken,
  newClient,
  SECRET,
  startTestServer,
  subscriptionToken,
  type TestServer,
  waitFor,
  waitForEvent,
} from '../testing/harness.ts';
import { signHmacJwt } from '../tokens/jwt.ts';
import { RealtimeEngine } from './engine.ts';
import { silentLogger } from './logger.ts';

/** The real `centrifuge` client against the engine: connect, subscribe, publish, hooks, presence, history, RPC. */

let server: TestServer;
const clients: Centrifuge[] = [];
const published: unknown[] = [];

before(async () => {
  server = await startTestServer({
    namespaces: [
      {
        name: 'chat',
        history_size: 50,
        history_ttl: '1h',
        force_recovery: true,
        allow_publish_for_subscriber: true,
        allow_history_for_subscriber: true,
        presence: true,
        join_leave: true,
        allow_presence_for_subscriber: true,
      },
      { name: 'open', allow_subscribe_for_client: true, allow_publish_for_client: true },
      { name: 'nohistory', allow_subscribe_for_client: true, allow_history_for_client: true },
    ],
    historyMaxPublicationLimit: 5,
    hooks: {
      onConnecting: (context) => ({ data: { welcome: context.token?.user } }),
      onPublish: async ({ data, channel }) => {
        published.push(data);
        const body = data as { text?: string; action?: string };
        if (body.action === 'reject') throw new ClientError(4001, 'rejected by application');
        if (body.action === 'skip') return { skip: true };
        if (body.action === 'upper') return { data: { text: String(body.text).toUpperCase(), channel } };
        return undefined;
      },
    },
  });
});

after(async () => {
  for (const client of clients) client.disconnect();
  await server.close();
});

function connectClient(user: string, options: Parameters<typeof newClient>[1] = {}): Centrifuge {
  const client = newClient(server.wsUrl, { token: connectionToken(user), ...options });
  clients.push(client);
  client.connect();
  return client;
}

async function subscribeTo(
  client: Centrifuge,
  user: string,
  channel: string,
  options = {},
): Promise<Subscription> {
  const sub = client.newSubscription(channel, {
    getToken: async ({ channel: ch }) => subscriptionToken(user, ch),
    ...options,
  });
  const ready = waitForEvent(sub, 'subscribed');
  sub.subscribe();
  await ready;
  return sub;
}

describe('connect', () => {
  test('a valid connection token connects and onConnecting data reaches the connected event', async () => {
    const client = newClient(server.wsUrl, { token: connectionToken('alice') });
    clients.push(client);
    const connected = waitForEvent<{ client: string; data: unknown }>(client, 'connected');
    client.connect();
    const ctx = await connected;
    assert.match(ctx.client, /^[0-9a-f-]{36}$/);
    assert.deepEqual(ctx.data, { welcome: 'alice' });
    client.disconnect();
  });

  test('a token signed with another key is refused with terminal 3500', async () => {
    const client = newClient(server.wsUrl, { token: signHmacJwt({ sub: 'mallory' }, 'wrong-secret') });
    clients.push(client);
    const disconnected = waitForEvent<{ code: number }>(client, 'disconnected');
    client.connect();
    assert.equal((await disconnected).code, 3500);
  });

  test('an expired token makes the client fetch a new one through getToken (error 109)', async () => {
    let calls = 0;
    const client = newClient(server.wsUrl, {
      token: connectionToken('bob', {}, -10),
      getToken: async () => {
        calls += 1;
        return connectionToken('bob');
      },
    });
    clients.push(client);
    const connected = waitForEvent(client, 'connected');
    client.connect();
    await connected;
    assert.equal(calls, 1);
    client.disconnect();
  });
});

describe('subscribe and publish', () => {
  test('subscribe through getToken, publish, and the publisher receives its own publication', async () => {
    const client = connectClient('carol');
    const sub = await subscribeTo(client, 'carol', 'chat:own');
    const publication = waitForEvent<{
      data: unknown;
      info: { user: string; client: string };
      offset: number;
    }>(sub, 'publication');
    await sub.publish({ text: 'hi' });
    const pub = await publication;
    assert.deepEqual(pub.data, { text: 'hi' });
    assert.equal(pub.info.user, 'carol');
    assert.equal(pub.offset, 1);
  });

  test('onPublish transforms data before anyone receives it', async () => {
    const writer = connectClient('dave');
    const reader = connectClient('erin');
    const writerSub = await subscribeTo(writer, 'dave', 'chat:transform');
    const readerSub = await subscribeTo(reader, 'erin', 'chat:transform');
    const received = waitForEvent<{ data: unknown }>(readerSub, 'publication');
    await writerSub.publish({ text: 'shout', action: 'upper' });
    assert.deepEqual((await received).data, { text: 'SHOUT', channel: 'chat:transform' });
  });

  test('a rejected publish fails with the application code and nothing is broadcast', async () => {
    const writer = connectClient('frank');
    const reader = connectClient('grace');
    const writerSub = await subscribeTo(writer, 'frank', 'chat:reject');
    const readerSub = await subscribeTo(reader, 'grace', 'chat:reject');
    const seen: unknown[] = [];
    readerSub.on('publication', (ctx) => seen.push(ctx.data));
    await assert.rejects(writerSub.publish({ action: 'reject' }), {
      code: 4001,
      message: 'rejected by application',
    });
    await writerSub.publish({ action: 'skip' });
    await writerSub.publish({ text: 'after' });
    await waitFor('publication', () => seen.length > 0, 5000);
    assert.deepEqual(seen, [{ text: 'after' }]);
    // The skipped one never reached the stream either: offsets continue gapless.
    const history = await server.engine.history('chat:reject', { limit: -1 });
    assert.deepEqual(
      history.publications.map((p) => p.data),
      [{ text: 'after' }],
    );
  });

  test('publishing without permission answers 103', async () => {
    const client = connectClient('heidi');
    await waitForEvent(client, 'connected');
    await assert.rejects(client.publish('chat:not-subscribed', { text: 'x' }), { code: 103 });
  });

  test('a server-side publish reaches subscribers with its offset', async () => {
    const client = connectClient('ivan');
    const sub = await subscribeTo(client, 'ivan', 'chat:server');
    const received = waitForEvent<{ data: unknown; offset: number }>(sub, 'publication');
    const result = await server.engine.publish({ channel: 'chat:server', data: { from: 'server' } });
    const pub = await received;
    assert.deepEqual(pub.data, { from: 'server' });
    assert.equal(pub.offset, result.offset);
  });

  test('subscription token problems end the subscription with the Centrifugo codes', async () => {
    const client = connectClient('judy');
    await waitForEvent(client, 'connected');
    const bad = client.newSubscription('chat:bad', {
      token: signHmacJwt({ sub: 'judy', channel: 'chat:bad' }, 'x'),
    });
    const badEnd = waitForEvent<{ code: number }>(bad, 'unsubscribed');
    bad.subscribe();
    assert.equal((await badEnd).code, 103);
    const unknown = client.newSubscription('nope:1', { token: subscriptionToken('judy', 'nope:1') });
    const unknownEnd = waitForEvent<{ code: number }>(unknown, 'unsubscribed');
    unknown.subscribe();
    assert.equal((await unknownEnd).code, 102);
    const privateSub = client.newSubscription('$open:secret');
    const privateEnd = waitForEvent<{ code: number }>(privateSub, 'unsubscribed');
    privateSub.subscribe();
    assert.equal((await privateEnd).code, 103);
    // A token for another channel is an attack: the whole connection is closed with 3500.
    const stolen = client.newSubscription('chat:a', { token: subscriptionToken('judy', 'chat:b') });
    const disconnected = waitForEvent<{ code: number }>(client, 'disconnected');
    stolen.subscribe();
    assert.equal((await disconnected).code, 3500);
  });

  test('a namespace allowing client subscriptions needs no token', async () => {
    const client = connectClient('ken');
    await waitForEvent(client, 'connected');
    const sub = client.newSubscription('open:lobby');
    const ready = waitForEvent(sub, 'subscribed');
    sub.subscribe();
    await ready;
    const received = waitForEvent<{ data: unknown }>(sub, 'publication');
    await sub.publish({ n: 1 });
    assert.deepEqual((await received).data, { n: 1 });
  });
});

describe('presence and join/leave', () => {
  test('presence lists subscribers and join/leave reach clients that asked for them', async () => {
    const first = connectClient('leo');
    const sub = await subscribeTo(first, 'leo', 'chat:room', { joinLeave: true });
    const joins: string[] = [];
    sub.on('join', (ctx) => joins.push(ctx.info.user));
    const second = connectClient('mia');
    const secondSub = await subscribeTo(second, 'mia', 'chat:room');
    await waitFor('join of mia', () => joins.includes('mia'), 5000);
    const presence = await sub.presence();
    const users = Object.values(presence.clients)
      .map((c) => c.user)
      .sort();
    assert.deepEqual(users, ['leo', 'mia']);
    const stats = await sub.presenceStats();
    assert.deepEqual(stats, { numClients: 2, numUsers: 2 });
    const left = waitForEvent<{ info: { user: string } }>(sub, 'leave');
    secondSub.unsubscribe();
    assert.equal((await left).info.user, 'mia');
  });
});

describe('history', () => {
  test('limit 0 returns only the position; limits are capped; reverse from 0 is 107; wrong epoch is 112', async () => {
    const client = connectClient('nina');
    const sub = await subscribeTo(client, 'nina', 'chat:history');
    for (let i = 1; i <= 8; i++) await server.engine.publish({ channel: 'chat:history', data: { i } });
    const position = await sub.history({ limit: 0 });
    assert.equal(position.publications.length, 0);
    assert.equal(position.offset, 8);
    const capped = await sub.history({ limit: 100 });
    assert.deepEqual(
      capped.publications.map((p) => p.data),
      [1, 2, 3, 4, 5].map((i) => ({ i })),
    );
    const since = await sub.history({ limit: 2, since: { offset: 6, epoch: position.epoch } });
    assert.deepEqual(
      since.publications.map((p) => p.offset),
      [7, 8],
    );
    const reverse = await sub.history({ limit: 2, reverse: true });
    assert.deepEqual(
      reverse.publications.map((p) => p.offset),
      [8, 7],
    );
    await assert.rejects(
      sub.history({ limit: 2, reverse: true, since: { offset: 0, epoch: position.epoch } }),
      {
        code: 107,
      },
    );
    await assert.rejects(sub.history({ limit: 2, since: { offset: 1, epoch: 'another' } }), { code: 112 });
  });

  test('history is 108 where the namespace keeps none and 103 without permission', async () => {
    const client = connectClient('oscar');
    await waitForEvent(client, 'connected');
    await assert.rejects(client.history('nohistory:x', { limit: 1 }), { code: 108 });
    await assert.rejects(client.history('chat:not-mine', { limit: 1 }), { code: 103 });
  });
});

describe('rpc and send', () => {
  test('rpc without an onRpc hook answers 108', async () => {
    const client = connectClient('peggy');
    await waitForEvent(client, 'connected');
    await assert.rejects(client.rpc('anything', {}), { code: 108 });
  });

  test('send without an onMessage hook closes with terminal 3508', async () => {
    const client = connectClient('quinn');
    await waitForEvent(client, 'connected');
    const disconnected = waitForEvent<{ code: number }>(client, 'disconnected');
    await client.send({ hello: true });
    assert.equal((await disconnected).code, 3508);
  });
});

describe('hooks on a dedicated engine', () => {
  test('onRpc answers, onMessage receives, and connect/subscribe events fire', async () => {
    const events: string[] = [];
    const messages: unknown[] = [];
    const local = await startTestServer({
      withoutNamespace: { allow_subscribe_for_client: true },
      hooks: {
        onRpc: async ({ method, data }) => ({ method, echo: data }),
        onMessage: ({ data }) => {
          messages.push(data);
        },
        onConnect: (client) => events.push(`connect:${client.user}`),
        onSubscribe: (client, channel) => events.push(`subscribe:${client.user}:${channel}`),
        onUnsubscribe: (client, channel) => events.push(`unsubscribe:${client.user}:${channel}`),
        onDisconnect: (client, info) => events.push(`disconnect:${client.user}:${info.code}`),
      },
    });
    try {
      const client = newClient(local.wsUrl, { token: connectionToken('rita') });
      client.connect();
      await waitForEvent(client, 'connected');
      const result = await client.rpc('sum', { a: 1 });
      assert.deepEqual(result.data, { method: 'sum', echo: { a: 1 } });
      await client.send({ note: 1 });
      await waitFor('message', () => messages.length === 1, 5000);
      const sub = client.newSubscription('lobby');
      const ready = waitForEvent(sub, 'subscribed');
      sub.subscribe();
      await ready;
      sub.unsubscribe();
      client.disconnect();
      await waitFor('disconnect event', () => events.some((e) => e.startsWith('disconnect')), 5000);
      assert.deepEqual(events.slice(0, 3), [
        'connect:rita',
        'subscribe:rita:lobby',
        'unsubscribe:rita:lobby',
      ]);
      assert.match(events[3]!, /^disconnect:rita:\d+$/);
      assert.deepEqual(messages, [{ note: 1 }]);
    } finally {
      await local.close();
    }
  });
});

test('SECRET is used for all tokens of this suite', () => {
  assert.ok(SECRET.length > 16);
});

describe('hooks installed after construction', () => {
  test('setHooks before start takes effect; after start it is refused', async () => {
    const engine = new RealtimeEngine({
      token: { hmacSecretKeys: ['a-secret-that-is-long-enough-1234'] },
      logger: silentLogger,
    });
    engine.setHooks({ onConnecting: () => ({ data: { installed: 'late' } }) });
    const server = createServer();
    engine.attach(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      await engine.start();
      assert.throws(() => engine.setHooks({}), /before the engine starts/);
      const { port } = server.address() as AddressInfo;
      const client = newClient(`ws://127.0.0.1:${port}/connection/websocket`, {
        token: signHmacJwt({ sub: 'late' }, 'a-secret-that-is-long-enough-1234'),
      });
      const connected = waitForEvent<{ data: unknown }>(client, 'connected');
      client.connect();
      assert.deepEqual((await connected).data, { installed: 'late' });
      client.disconnect();
    } finally {
      await engine.close({ timeoutMs: 500 });
      server.close();
    }
  });

  test('a checkOrigin hook installed with setHooks decides the WebSocket upgrade', async () => {
    const engine = new RealtimeEngine({
      token: { hmacSecretKeys: ['a-secret-that-is-long-enough-1234'] },
      logger: silentLogger,
    });
    const seen: Array<string | undefined> = [];
    engine.setHooks({
      checkOrigin: (origin) => {
        seen.push(origin);
        return origin === 'http://any-page.example';
      },
    });
    const server = createServer();
    engine.attach(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      await engine.start();
      const { port } = server.address() as AddressInfo;
      const upgrade = (origin: string) =>
        new Promise<number>((resolve) => {
          const socket = new WebSocket(`ws://127.0.0.1:${port}/connection/websocket`, { origin });
          socket.on('open', () => {
            socket.close();
            resolve(101);
          });
          socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
          socket.on('error', () => undefined);
        });
      // Not same-origin, so only the hook can admit it; the hook refuses the other.
      assert.equal(await upgrade('http://any-page.example'), 101);
      assert.equal(await upgrade('http://elsewhere.example'), 403);
      assert.deepEqual(seen, ['http://any-page.example', 'http://elsewhere.example']);
    } finally {
      await engine.close({ timeoutMs: 500 });
      server.close();
    }
  });
});
