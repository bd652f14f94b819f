import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { Centrifuge, Subscription } from 'centrifuge';
import {
  closedAfterAll,
  connectionToken,
  type NodeBackend,
  newClient,
  newMemoryBackend,
  startTestServer,
  subscriptionToken,
  type TestServer,
  waitFor,
  waitForEvent,
} from '../testing/harness.ts';
import type { NamespaceConfig } from './namespaces.ts';

/** The Centrifugo-compatible server API over plain HTTP, on one node and across nodes sharing a broker. */

const NAMESPACES: NamespaceConfig[] = [
  { name: 'chat', history_size: 10, history_ttl: '300s', force_recovery: true, presence: true },
  { name: 'live' },
];

const cleanups = closedAfterAll();

async function api(
  server: TestServer,
  method: string,
  body: unknown,
  headers: Record<string, string> = { 'X-API-Key': 'api-key' },
): Promise<{ status: number; json: unknown; text: string }> {
  const response = await fetch(`${server.baseUrl}/api/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text };
}

async function connectSubscriber(
  server: TestServer,
  user: string,
  channel: string,
): Promise<{ client: Centrifuge; sub: Subscription }> {
  const client = newClient(server.wsUrl, { token: connectionToken(user), minReconnectDelay: 5000 });
  cleanups.push(() => client.disconnect());
  const sub = client.newSubscription(channel, { getToken: async () => subscriptionToken(user, channel) });
  client.connect();
  sub.subscribe();
  await waitForEvent(sub, 'subscribed');
  return { client, sub };
}

describe('one node', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ namespaces: NAMESPACES });
    cleanups.push(() => server.close());
  });

  test('requests without the right key are 401; Authorization: apikey works too', async () => {
    assert.equal((await api(server, 'info', {}, {})).status, 401);
    assert.equal((await api(server, 'info', {}, { 'X-API-Key': 'wrong' })).status, 401);
    const viaAuthorization = await api(server, 'info', {}, { Authorization: 'apikey api-key' });
    assert.equal(viaAuthorization.status, 200);
  });

  test('unknown methods are 404, GET is 405, malformed JSON is 400', async () => {
    assert.equal((await api(server, 'teleport', {})).status, 404);
    const get = await fetch(`${server.baseUrl}/api/info`, { headers: { 'X-API-Key': 'api-key' } });
    assert.equal(get.status, 405);
    await get.body?.cancel();
    assert.equal((await api(server, 'publish', '{"channel":')).status, 400);
    // JSON nested past the limit (docs/protocol.md "JSON nesting") is refused before it is read: 400, not 500.
    const deep = (n: number) => `{"channel":"chat:x","data":${'['.repeat(n)}${']'.repeat(n)}}`;
    assert.equal((await api(server, 'publish', deep(20_000))).status, 400);
    assert.equal((await api(server, 'publish', deep(63))).status, 200);
  });

  test('publish returns the stream position and subscribers receive the data', async () => {
    const { sub } = await connectSubscriber(server, 'reader', 'chat:api');
    const received = waitForEvent<{ data: unknown; offset: number }>(sub, 'publication');
    const reply = await api(server, 'publish', { channel: 'chat:api', data: { text: 'from api' } });
    const result = (reply.json as { result: { offset: number; epoch: string } }).result;
    assert.equal(result.offset, 1);
    assert.equal(typeof result.epoch, 'string');
    const pub = await received;
    assert.deepEqual(pub.data, { text: 'from api' });
    assert.equal(pub.offset, 1);
    const noHistory = await api(server, 'publish', { channel: 'live:x', data: {} });
    assert.deepEqual(noHistory.json, { result: {} });
  });

  test('errors come back as {error:{code,message}} with 200, or as HTTP statuses in transport mode', async () => {
    assert.deepEqual((await api(server, 'publish', { channel: 'nope:x', data: {} })).json, {
      error: { code: 102, message: 'unknown channel' },
    });
    assert.deepEqual((await api(server, 'publish', { channel: 'chat:x' })).json, {
      error: { code: 107, message: 'bad request' },
    });
    const transport = await api(
      server,
      'history',
      { channel: 'live:x' },
      { 'X-API-Key': 'api-key', 'X-Centrifugo-Error-Mode': 'transport' },
    );
    assert.equal(transport.status, 400);
    assert.deepEqual(transport.json, { code: 108, message: 'not available' });
  });

  test('broadcast answers one response per channel', async () => {
    const reply = await api(server, 'broadcast', {
      channels: ['chat:b1', 'nope:b', 'live:b'],
      data: { n: 1 },
    });
    const responses = (reply.json as { result: { responses: unknown[] } }).result.responses;
    assert.equal(responses.length, 3);
    assert.equal((responses[0] as { result: { offset: number } }).result.offset, 1);
    assert.deepEqual(responses[1], { error: { code: 102, message: 'unknown channel' } });
    assert.deepEqual(responses[2], { result: {} });
  });

  test('history, history_remove', async () => {
    for (let n = 1; n <= 3; n++) await api(server, 'publish', { channel: 'chat:h', data: { n } });
    const history = (await api(server, 'history', { channel: 'chat:h', limit: 2 })).json as {
      result: { publications: Array<{ data: unknown; offset: number }>; offset: number; epoch: string };
    };
    assert.deepEqual(
      history.result.publications.map((p) => [p.data, p.offset]),
      [
        [{ n: 1 }, 1],
        [{ n: 2 }, 2],
      ],
    );
    assert.equal(history.result.offset, 3);
    const reversed = (await api(server, 'history', { channel: 'chat:h', limit: 1, reverse: true })).json as {
      result: { publications: Array<{ offset: number }> };
    };
    assert.equal(reversed.result.publications[0]!.offset, 3);
    assert.deepEqual((await api(server, 'history_remove', { channel: 'chat:h' })).json, { result: {} });
    const after = (await api(server, 'history', { channel: 'chat:h', limit: -1 })).json as {
      result: { publications: unknown[]; offset: number; epoch: string };
    };
    assert.deepEqual(after.result.publications, []);
    assert.equal(after.result.offset, 3, 'the position survives history_remove');
  });

  test('presence and presence_stats', async () => {
    const { client } = await connectSubscriber(server, 'present', 'chat:presence');
    const presence = (await api(server, 'presence', { channel: 'chat:presence' })).json as {
      result: { presence: Record<string, { user: string; client: string }> };
    };
    const entries = Object.values(presence.result.presence);
    assert.equal(entries.length, 1);
    assert.equal(entries[0]!.user, 'present');
    assert.deepEqual((await api(server, 'presence_stats', { channel: 'chat:presence' })).json, {
      result: { num_clients: 1, num_users: 1 },
    });
    client.disconnect();
  });

  test('unsubscribe ends the subscription with 2000; disconnect closes with 3503 or a custom code', async () => {
    const { client, sub } = await connectSubscriber(server, 'target', 'chat:kick');
    const ended = waitForEvent<{ code: number }>(sub, 'unsubscribed');
    assert.deepEqual((await api(server, 'unsubscribe', { user: 'target', channel: 'chat:kick' })).json, {
      result: {},
    });
    assert.equal((await ended).code, 2000);
    const disconnected = waitForEvent<{ code: number; reason: string }>(client, 'disconnected');
    await api(server, 'disconnect', { user: 'target', disconnect: { code: 4501, reason: 'banned' } });
    assert.deepEqual(await disconnected, { code: 4501, reason: 'banned' });
  });

  test('channels lists active channels with counts and filters by pattern', async () => {
    await connectSubscriber(server, 'c1', 'live:alpha');
    await connectSubscriber(server, 'c2', 'live:alpha');
    await connectSubscriber(server, 'c3', 'chat:beta');
    const all = (await api(server, 'channels', {})).json as {
      result: { channels: Record<string, { num_clients: number }> };
    };
    assert.deepEqual(all.result.channels['live:alpha'], { num_clients: 2 });
    const filtered = (await api(server, 'channels', { pattern: 'live:*' })).json as {
      result: { channels: Record<string, unknown> };
    };
    assert.deepEqual(Object.keys(filtered.result.channels), ['live:alpha']);
  });
});

/** A node of a cluster on `backend`, heartbeating every 200 ms so the nodes soon see each other. */
async function startNodeOn(backend: NodeBackend): Promise<TestServer> {
  const server = await startTestServer({
    namespaces: NAMESPACES,
    nodeHeartbeatIntervalMs: 200,
    ...backend(),
  });
  cleanups.push(() => server.close());
  return server;
}

describe('several nodes sharing a broker', () => {
  test('disconnect, unsubscribe, channels and info work across nodes', async () => {
    const backend = newMemoryBackend();
    const a = await startNodeOn(backend);
    const b = await startNodeOn(backend);
    const { client, sub } = await connectSubscriber(b, 'remote', 'chat:cluster');
    await connectSubscriber(a, 'local', 'chat:cluster');
    await waitFor('nodes to see each other', () => a.engine.info().nodes.length === 2, 5000);
    const info = (await api(a, 'info', {})).json as {
      result: { nodes: Array<{ uid: string; num_clients: number }> };
    };
    assert.equal(info.result.nodes.length, 2);
    const channels = (await api(a, 'channels', { pattern: 'chat:*' })).json as {
      result: { channels: Record<string, { num_clients: number }> };
    };
    assert.deepEqual(channels.result.channels, { 'chat:cluster': { num_clients: 2 } });
    const received = waitForEvent<{ data: unknown }>(sub, 'publication');
    await api(a, 'publish', { channel: 'chat:cluster', data: { across: true } });
    assert.deepEqual((await received).data, { across: true });
    const ended = waitForEvent<{ code: number }>(sub, 'unsubscribed');
    await api(a, 'unsubscribe', { user: 'remote', channel: 'chat:cluster' });
    assert.equal((await ended).code, 2000);
    const disconnected = waitForEvent<{ code: number }>(client, 'disconnected');
    await api(a, 'disconnect', { user: 'remote' });
    assert.equal((await disconnected).code, 3503);
  });
});

describe('subscribe, refresh, batch and rpc (Centrifugo v6 methods)', () => {
  test('subscribe makes a server-side subscription on every node; it receives publications and recovers', async () => {
    const backend = newMemoryBackend();
    const a = await startNodeOn(backend);
    const b = await startNodeOn(backend);
    const client = newClient(b.wsUrl, { token: connectionToken('served') });
    cleanups.push(() => client.disconnect());
    client.connect();
    await waitForEvent(client, 'connected');
    const subscribed = waitForEvent<{ channel: string; data?: unknown; recoverable?: boolean }>(
      client,
      'subscribed',
    );
    const reply = await api(a, 'subscribe', { user: 'served', channel: 'chat:pushed', data: { welcome: 1 } });
    assert.deepEqual(reply.json, { result: {} });
    const ctx = await subscribed;
    assert.equal(ctx.channel, 'chat:pushed');
    assert.deepEqual(ctx.data, { welcome: 1 });
    assert.equal(ctx.recoverable, true);
    const received = waitForEvent<{ channel: string; data: unknown; offset: number }>(client, 'publication');
    await api(a, 'publish', { channel: 'chat:pushed', data: { n: 1 } });
    assert.deepEqual(await received, { channel: 'chat:pushed', data: { n: 1 }, offset: 1 });
    // An unknown namespace is 102, an empty channel 107, a malformed override 107.
    assert.deepEqual((await api(a, 'subscribe', { user: 'served', channel: 'nope:x' })).json, {
      error: { code: 102, message: 'unknown channel' },
    });
    assert.equal(
      ((await api(a, 'subscribe', { user: 'served' })).json as { error: { code: number } }).error.code,
      107,
    );
    const badOverride = await api(a, 'subscribe', {
      user: 'served',
      channel: 'chat:o',
      override: { presence: 1 },
    });
    assert.equal((badOverride.json as { error: { code: number } }).error.code, 107);
  });

  test('refresh: a future expiry keeps the connection, a past one or expired: true closes it with 3005', async () => {
    const server = await startTestServer({ namespaces: NAMESPACES });
    cleanups.push(() => server.close());
    const client = newClient(server.wsUrl, { token: connectionToken('refreshed'), minReconnectDelay: 10 });
    cleanups.push(() => client.disconnect());
    client.connect();
    await waitForEvent(client, 'connected');
    const inTenMinutes = Math.floor(Date.now() / 1000) + 600;
    assert.deepEqual(
      (await api(server, 'refresh', { user: 'refreshed', expire_at: inTenMinutes, info: { v: 2 } })).json,
      { result: {} },
    );
    // 3005 "connection expired" makes the client reconnect (not terminal); it does, with its token.
    let reconnecting = waitForEvent<{ code: number }>(client, 'connecting');
    await api(server, 'refresh', { user: 'refreshed', expire_at: Math.floor(Date.now() / 1000) - 1 });
    assert.equal((await reconnecting).code, 3005);
    await waitForEvent(client, 'connected');
    reconnecting = waitForEvent<{ code: number }>(client, 'connecting');
    await api(server, 'refresh', { user: 'refreshed', expired: true });
    assert.equal((await reconnecting).code, 3005);
  });

  test('batch runs commands in order (or in parallel) with one reply each; unknown commands are 104', async () => {
    const server = await startTestServer({ namespaces: NAMESPACES });
    cleanups.push(() => server.close());
    const sequential = await api(server, 'batch', {
      commands: [
        { publish: { channel: 'chat:b', data: { n: 1 } } },
        { publish: { channel: 'chat:b', data: { n: 2 } } },
        { history: { channel: 'chat:b', limit: 10 } },
        { presence_stats: { channel: 'chat:b' } },
        { publish: { channel: 'nope:b', data: 1 } },
        { fly: {} },
        null,
      ],
    });
    // Exactly Centrifugo v6's BatchResponse: `replies` at the top, no `result` around it.
    assert.deepEqual(Object.keys(sequential.json as object), ['replies']);
    const { replies } = sequential.json as { replies: Array<Record<string, unknown>> };
    assert.equal(replies.length, 7);
    assert.equal((replies[0]!.publish as { offset: number }).offset, 1);
    assert.equal((replies[1]!.publish as { offset: number }).offset, 2);
    assert.deepEqual(
      (replies[2]!.history as { publications: Array<{ data: unknown }> }).publications.map((p) => p.data),
      [{ n: 1 }, { n: 2 }],
    );
    assert.deepEqual(replies[3], { presence_stats: { num_clients: 0, num_users: 0 } });
    assert.deepEqual(replies[4], { error: { code: 102, message: 'unknown channel' } });
    assert.deepEqual(replies[5], { error: { code: 104, message: 'not found' } });
    assert.deepEqual(replies[6], { error: { code: 107, message: 'bad request' } });
    const parallel = await api(server, 'batch', {
      parallel: true,
      commands: [{ info: {} }, { channels: {} }],
    });
    const result = parallel.json as { replies: Array<Record<string, unknown>> };
    assert.deepEqual(
      result.replies.map((r) => Object.keys(r)[0]),
      ['info', 'channels'],
    );
    assert.deepEqual((await api(server, 'batch', {})).json, { replies: [] });
    // A body that is no BatchRequest is HTTP 400, as any body Centrifugo cannot decode.
    assert.equal((await api(server, 'batch', { commands: 'x' })).status, 400);
  });

  test('rpc has no registered methods: 104 (404 in transport mode)', async () => {
    const server = await startTestServer({ namespaces: NAMESPACES });
    cleanups.push(() => server.close());
    assert.deepEqual((await api(server, 'rpc', { method: 'x' })).json, {
      error: { code: 104, message: 'not found' },
    });
    const transport = await api(
      server,
      'rpc',
      { method: 'x' },
      { 'X-API-Key': 'api-key', 'X-Centrifugo-Error-Mode': 'transport' },
    );
    assert.equal(transport.status, 404);
  });
});
