import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { before, describe, test } from 'node:test';
import WebSocket from 'ws';
import type { NamespaceConfig } from '../engine/namespaces.ts';
import type { RealtimeEngineOptions } from '../engine/options.ts';
import {
  closedAfterAll,
  connectionToken,
  connectRawClient,
  newClient,
  startTestServer,
  type TestServer,
  waitFor,
  waitForEvent,
} from '../testing/harness.ts';

/**
 * The HTTP proxies against a backend the test runs (docs/protocol.md "Proxies"): Centrifugo v6 payloads, results,
 * errors, disconnects, status transforms and time-outs, for connect, refresh, subscribe, publish, sub_refresh and RPC.
 */

const cleanups = closedAfterAll();

interface Call {
  path: string;
  body: Record<string, unknown>;
  headers: IncomingHttpHeaders;
}

type Answer = { status?: number; body?: unknown; delayMs?: number };

/** A backend answering each proxy path with what the test sets, recording every call. */
class Backend {
  readonly calls: Call[] = [];
  readonly answers = new Map<string, (call: Call) => Answer>();
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const call: Call = {
        path: request.url ?? '/',
        body: JSON.parse(Buffer.concat(chunks).toString() || '{}') as Record<string, unknown>,
        headers: request.headers,
      };
      this.calls.push(call);
      const answer = this.answers.get(call.path)?.(call) ?? { body: { result: {} } };
      if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
      if (response.destroyed) return;
      response.writeHead(answer.status ?? 200, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify(answer.body ?? {}));
    });
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          this.server.closeAllConnections();
          this.server.close(() => resolve());
        }),
    );
  }

  answer(path: string, answer: Answer | ((call: Call) => Answer)): void {
    this.answers.set(path, typeof answer === 'function' ? answer : () => answer);
  }

  callsTo(path: string): Call[] {
    return this.calls.filter((c) => c.path === path);
  }
}

const NAMESPACES: NamespaceConfig[] = [
  { name: 'news', allow_subscribe_for_client: true },
  {
    name: 'proxied',
    subscribe_proxy_enabled: true,
    publish_proxy_enabled: true,
    sub_refresh_proxy_enabled: true,
  },
  { name: 'named', subscribe_proxy_enabled: true, subscribe_proxy_name: 'special' },
];

const backend = new Backend();
let server: TestServer;

async function startWithProxies(extra: Partial<RealtimeEngineOptions> = {}): Promise<TestServer> {
  const url = backend.url;
  const started = await startTestServer({
    namespaces: NAMESPACES,
    proxy: {
      connect: {
        endpoint: `${url}/connect`,
        timeout: '300ms',
        http_headers: ['x-custom'],
        static_headers: { 'x-static': 'yes' },
        status_to_code_transforms: [{ status_code: 403, to_disconnect: { code: 4503, reason: 'forbidden' } }],
      },
      refresh: { endpoint: `${url}/refresh` },
      subscribe: { endpoint: `${url}/subscribe` },
      publish: { endpoint: `${url}/publish`, include_connection_meta: true },
      sub_refresh: { endpoint: `${url}/sub_refresh` },
      rpc: { endpoint: `${url}/rpc` },
      named: { special: { endpoint: `${url}/special`, binary_encoding: true } },
      rpc_routing: { without_namespace: { proxy_enabled: true }, namespaces: [{ name: 'off' }] },
    },
    ...extra,
  });
  cleanups.push(() => started.close());
  return started;
}

/** A client with no token (the connect proxy decides) sending `X-Custom` on its upgrade request. */
/** A WebSocket sending `X-Custom: value`, a header the proxies pass on: it tells one client's calls from others'. */
function socketWithHeader(value: string) {
  return class HeaderWebSocket extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, { headers: { 'X-Custom': value } });
    }
  };
}

function proxiedClient(url = server.wsUrl, header = 'from-client') {
  const client = newClient(url, {
    websocket: socketWithHeader(header),
    minReconnectDelay: 50,
    maxReconnectDelay: 100,
  });
  cleanups.push(() => client.disconnect());
  return client;
}

/**
 * The connect proxy calls made for the client sending `header`. Clients of earlier tests in this file keep
 * reconnecting through the proxy until the file ends, so a count of every call would include theirs.
 */
const connectCallsOf = (header: string) =>
  backend.callsTo('/connect').filter((call) => call.headers['x-custom'] === header);

before(async () => {
  await backend.start();
  server = await startWithProxies();
});

describe('connect proxy', () => {
  test('admits a connection without a token with the user, info, data and channels it returns', async () => {
    backend.answer('/connect', {
      body: {
        result: {
          user: '42',
          info: { name: 'Ann' },
          data: { hello: 1 },
          channels: ['news:a'],
          meta: { m: 1 },
        },
      },
    });
    const client = proxiedClient();
    const connected = waitForEvent<{ data: unknown }>(client, 'connected');
    const subscribed = waitForEvent<{ channel: string }>(client, 'subscribed');
    client.connect();
    assert.deepEqual((await connected).data, { hello: 1 });
    assert.equal((await subscribed).channel, 'news:a');
    const call = backend.callsTo('/connect').at(-1)!;
    assert.deepEqual(Object.keys(call.body).sort(), [
      'client',
      'encoding',
      'name',
      'protocol',
      'transport',
      'version',
    ]);
    assert.equal(call.body.transport, 'websocket');
    assert.equal(call.body.protocol, 'json');
    assert.equal(call.body.encoding, 'json');
    assert.equal(call.body.name, 'js');
    assert.equal(call.headers['x-custom'], 'from-client');
    assert.equal(call.headers['x-static'], 'yes');
  });

  test('an error is the connect reply error; a disconnect closes; a mapped status closes too', async () => {
    backend.answer('/connect', { body: { error: { code: 1000, message: 'not you' } } });
    let client = proxiedClient();
    let disconnected = waitForEvent<{ code: number; reason: string }>(client, 'disconnected');
    client.connect();
    assert.deepEqual(await disconnected, { code: 1000, reason: 'not you' });

    backend.answer('/connect', { body: { disconnect: { code: 4501, reason: 'banned' } } });
    client = proxiedClient();
    disconnected = waitForEvent(client, 'disconnected');
    client.connect();
    assert.deepEqual(await disconnected, { code: 4501, reason: 'banned' });

    backend.answer('/connect', { status: 403 });
    client = proxiedClient();
    disconnected = waitForEvent(client, 'disconnected');
    client.connect();
    assert.deepEqual(await disconnected, { code: 4503, reason: 'forbidden' });
  });

  test('a backend that fails or answers late is error 100, temporary: the client keeps retrying', async () => {
    for (const answer of [{ status: 500 }, { delayMs: 600, body: { result: { user: 'late' } } }]) {
      backend.answer('/connect', answer);
      const raw = await connectRawClient(server.wsUrl, '');
      const reply = raw.messages.find((m) => m.id === 1) as { error?: { code: number; temporary?: boolean } };
      raw.close();
      assert.deepEqual(reply.error, { code: 100, message: 'internal server error', temporary: true });
    }
    // A centrifuge client takes that for temporary and connects again, each time through the proxy.
    backend.answer('/connect', { status: 500 });
    const header = randomUUID();
    const client = proxiedClient(server.wsUrl, header);
    client.connect();
    await waitFor(
      'the client to try again after the failed connect',
      () => connectCallsOf(header).length >= 2,
    );
    assert.notEqual(client.state, 'disconnected', 'still trying, not given up');
    client.disconnect();
  });

  test('an onConnecting hook takes precedence: the proxy is not called', async () => {
    const withHook = await startWithProxies({ hooks: { onConnecting: () => ({ user: 'hooked' }) } });
    const header = randomUUID();
    const client = proxiedClient(withHook.wsUrl, header);
    const connected = waitForEvent(client, 'connected');
    client.connect();
    await connected;
    assert.deepEqual(connectCallsOf(header), []);
  });
});

describe('subscribe, publish and sub_refresh proxies', () => {
  test('subscribe: the result data and info apply; an error refuses; a named proxy gets base64 payloads', async () => {
    backend.answer('/connect', { body: { result: { user: '7', meta: { plan: 'pro' } } } });
    backend.answer('/subscribe', (call) =>
      call.body.channel === 'proxied:no'
        ? { body: { error: { code: 1403, message: 'not yours' } } }
        : { body: { result: { data: { welcome: true }, info: { role: 'member' } } } },
    );
    const client = proxiedClient();
    client.connect();
    const sub = client.newSubscription('proxied:room', { data: { want: 'in' } });
    const subscribed = waitForEvent<{ data: unknown }>(sub, 'subscribed');
    sub.subscribe();
    assert.deepEqual((await subscribed).data, { welcome: true });
    const call = backend.callsTo('/subscribe').at(-1)!;
    assert.equal(call.body.user, '7');
    assert.equal(call.body.channel, 'proxied:room');
    assert.deepEqual(call.body.data, { want: 'in' });

    const refused = client.newSubscription('proxied:no');
    const unsubscribed = waitForEvent<{ code: number }>(refused, 'unsubscribed');
    refused.subscribe();
    assert.equal((await unsubscribed).code, 1403);

    backend.answer('/special', {
      body: { result: { b64data: Buffer.from('{"named":1}').toString('base64') } },
    });
    const named = client.newSubscription('named:x', { data: { q: 1 } });
    const namedSubscribed = waitForEvent<{ data: unknown }>(named, 'subscribed');
    named.subscribe();
    assert.deepEqual((await namedSubscribed).data, { named: 1 });
    const special = backend.callsTo('/special').at(-1)!;
    assert.equal(special.body.encoding, 'binary');
    assert.equal(Buffer.from(special.body.b64data as string, 'base64').toString(), '{"q":1}');
  });

  test('publish: the backend rewrites the data (with the connection meta), or refuses with its error', async () => {
    backend.answer('/connect', { body: { result: { user: '8', meta: { plan: 'pro' } } } });
    backend.answer('/subscribe', { body: { result: {} } });
    backend.answer('/publish', (call) =>
      (call.body.data as { text?: string }).text === 'bad'
        ? { body: { error: { code: 1400, message: 'rude' } } }
        : {
            body: {
              result: { data: { text: String((call.body.data as { text: string }).text).toUpperCase() } },
            },
          },
    );
    const client = proxiedClient();
    client.connect();
    const sub = client.newSubscription('proxied:pub');
    sub.subscribe();
    await waitForEvent(sub, 'subscribed');
    const received = waitForEvent<{ data: unknown }>(sub, 'publication');
    await sub.publish({ text: 'hello' });
    assert.deepEqual((await received).data, { text: 'HELLO' });
    const call = backend.callsTo('/publish').at(-1)!;
    assert.deepEqual(call.body.meta, { plan: 'pro' });
    assert.equal(call.body.channel, 'proxied:pub');
    await assert.rejects(sub.publish({ text: 'bad' }), (error: { code: number; message: string }) => {
      assert.equal(error.code, 1400);
      assert.equal(error.message, 'rude');
      return true;
    });
  });

  test('sub_refresh: an expiring proxied subscription is renewed by the backend, then ended (2501)', async () => {
    backend.answer('/connect', { body: { result: { user: '9' } } });
    // expire_at is in whole seconds: +2 leaves at least one second for the subscribe reply, even on a loaded machine.
    backend.answer('/subscribe', { body: { result: { expire_at: Math.floor(Date.now() / 1000) + 2 } } });
    let refreshes = 0;
    backend.answer('/sub_refresh', () =>
      ++refreshes === 1
        ? { body: { result: { expire_at: Math.floor(Date.now() / 1000) + 1 } } }
        : { body: { result: { expired: true } } },
    );
    const client = proxiedClient();
    client.connect();
    const sub = client.newSubscription('proxied:expiring');
    const subscribed = waitForEvent<{ expires?: boolean }>(sub, 'subscribed');
    sub.subscribe();
    // The client is not asked to refresh: the server does it through the proxy.
    assert.equal((await subscribed).expires, undefined);
    const ended = waitForEvent<{ code: number }>(sub, 'subscribing', 8000);
    assert.equal((await ended).code, 2501);
    assert.equal(refreshes, 2);
    const call = backend.callsTo('/sub_refresh').at(-1)!;
    assert.equal(call.body.channel, 'proxied:expiring');
    assert.equal(call.body.user, '9');
  });
});

describe('refresh and RPC proxies', () => {
  test('refresh: the backend extends an expiring connection, later says expired → 3005', async () => {
    backend.answer('/connect', {
      body: { result: { user: '10', expire_at: Math.floor(Date.now() / 1000) + 2 } },
    });
    let refreshes = 0;
    backend.answer('/refresh', () =>
      ++refreshes === 1
        ? { body: { result: { expire_at: Math.floor(Date.now() / 1000) + 1, info: { v: 2 } } } }
        : { body: { result: { expired: true } } },
    );
    const client = proxiedClient();
    client.connect();
    await waitForEvent(client, 'connected');
    const dropped = waitForEvent<{ code: number }>(client, 'connecting', 8000);
    assert.equal((await dropped).code, 3005);
    assert.equal(refreshes, 2);
    assert.equal(backend.callsTo('/refresh').at(-1)!.body.user, '10');
  });

  test('rpc: routed by method namespace; a namespace without a proxy is 108, an unknown one 104', async () => {
    backend.answer('/connect', { body: { result: { user: '11' } } });
    backend.answer('/rpc', (call) => ({
      body: { result: { data: { method: call.body.method, got: call.body.data } } },
    }));
    const client = proxiedClient();
    client.connect();
    await waitForEvent(client, 'connected');
    assert.deepEqual((await client.rpc('sum', { a: 1 })).data, { method: 'sum', got: { a: 1 } });
    await assert.rejects(client.rpc('off:x', {}), (e: { code: number }) => e.code === 108);
    await assert.rejects(client.rpc('nowhere:x', {}), (e: { code: number }) => e.code === 104);
  });
});

describe('configuration', () => {
  test('a namespace naming a proxy that is not configured fails at start', async () => {
    await assert.rejects(
      startTestServer({
        namespaces: [{ name: 'xx', publish_proxy_enabled: true, publish_proxy_name: 'missing' }],
      }),
      /publish proxy "missing" is not configured/,
    );
  });

  test('a proxy endpoint that is not http(s) is refused (gRPC proxies are not supported)', async () => {
    await assert.rejects(
      startTestServer({ proxy: { connect: { endpoint: 'grpc://127.0.0.1:1' } } }),
      /gRPC proxies are not supported/,
    );
  });

  test('the connection token still works next to a connect proxy (the proxy only sees token-less connects)', async () => {
    const header = randomUUID();
    const client = newClient(server.wsUrl, {
      token: connectionToken('with-token'),
      websocket: socketWithHeader(header),
    });
    cleanups.push(() => client.disconnect());
    client.connect();
    await waitForEvent(client, 'connected');
    assert.deepEqual(connectCallsOf(header), []);
  });
});
