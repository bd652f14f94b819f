import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import WebSocket from 'ws';
import {
  connectionToken,
  newClient,
  nextEvent,
  RawClient,
  sleep,
  startTestServer,
  subscriptionToken,
  type TestServer,
  waitUntil,
} from '../testing/harness.ts';

/** Limits and hygiene: channel limit, name length, command rate, origins, slow consumers, shutdown. */

const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function serverWith(
  options: Parameters<typeof startTestServer>[0] = {},
  port = 0,
): Promise<TestServer> {
  const server = await startTestServer({ namespaces: [{ name: 'chat' }], ...options }, port);
  cleanups.push(() => server.close());
  return server;
}

async function rawConnected(
  server: TestServer,
  user: string,
  options: WebSocket.ClientOptions = {},
): Promise<RawClient> {
  const raw = new RawClient(server.wsUrl, options);
  cleanups.push(() => raw.close());
  await raw.opened;
  raw.send({ id: 1, connect: { token: connectionToken(user) } });
  await raw.reply(1);
  return raw;
}

describe('subscription limits', () => {
  test('more channels than channelLimit answers 106, a too long name 107', async () => {
    const server = await serverWith({ channelLimit: 2, channelRules: { maxLength: 20 } });
    const raw = await rawConnected(server, 'u1');
    const subscribe = (id: number, channel: string) =>
      raw.send({ id, subscribe: { channel, token: subscriptionToken('u1', channel) } });
    subscribe(2, 'chat:1');
    subscribe(3, 'chat:2');
    subscribe(4, 'chat:3');
    assert.ok((await raw.reply(2)).subscribe);
    assert.ok((await raw.reply(3)).subscribe);
    assert.deepEqual((await raw.reply(4)).error, { code: 106, message: 'limit exceeded' });
    raw.send({ id: 5, unsubscribe: { channel: 'chat:1' } });
    await raw.reply(5);
    subscribe(6, `chat:${'x'.repeat(30)}`);
    assert.deepEqual((await raw.reply(6)).error, { code: 107, message: 'bad request' });
  });

  test('the centrifuge client ends a subscription over the limit with code 106', async () => {
    const server = await serverWith({ channelLimit: 1 });
    const c = newClient(server.wsUrl, { token: connectionToken('u2') });
    cleanups.push(() => c.disconnect());
    const subToken = async ({ channel }: { channel: string }) => subscriptionToken('u2', channel);
    const first = c.newSubscription('chat:a', { getToken: subToken });
    const second = c.newSubscription('chat:b', { getToken: subToken });
    c.connect();
    first.subscribe();
    await nextEvent(first, 'subscribed');
    const ended = nextEvent<{ code: number }>(second, 'unsubscribed');
    second.subscribe();
    assert.equal((await ended).code, 106);
  });

  test('userConnectionLimit closes the extra connection with 3504', async () => {
    const server = await serverWith({ userConnectionLimit: 1 });
    await rawConnected(server, 'solo');
    const extra = new RawClient(server.wsUrl);
    cleanups.push(() => extra.close());
    await extra.opened;
    extra.send({ id: 1, connect: { token: connectionToken('solo') } });
    assert.equal(await extra.waitClosed(), 3504);
  });
});

describe('command rate', () => {
  test('commands over the rate get 111, a client that keeps flooding is closed with 3013', async () => {
    const server = await serverWith({ commandRate: { perSecond: 1, burst: 4 } });
    const raw = await rawConnected(server, 'u3');
    const commands = [2, 3, 4, 5, 6].map((id) => ({ id, unsubscribe: { channel: `chat:${id}` } }));
    raw.send(...commands);
    assert.deepEqual((await raw.reply(2)).unsubscribe, {});
    assert.deepEqual((await raw.reply(4)).unsubscribe, {});
    assert.deepEqual((await raw.reply(5)).error, {
      code: 111,
      message: 'too many requests',
      temporary: true,
    });
    assert.deepEqual((await raw.reply(6)).error, {
      code: 111,
      message: 'too many requests',
      temporary: true,
    });
    const flood = Array.from({ length: 150 }, (_, i) => ({
      id: 100 + i,
      unsubscribe: { channel: 'chat:f' },
    }));
    raw.send(...flood);
    assert.equal(await raw.waitClosed(), 3013);
  });
});

describe('origins', () => {
  test('a browser origin outside allowedOrigins is refused with 403 at upgrade', async () => {
    const server = await serverWith({ allowedOrigins: ['https://*.good.example'] });
    const statusOf = async (origin?: string): Promise<number> => {
      const ws = new WebSocket(server.wsUrl, origin ? { origin } : {});
      ws.on('error', () => {});
      const result = await Promise.race([
        once(ws, 'open').then(() => 101),
        once(ws, 'unexpected-response').then(
          ([, response]) => (response as { statusCode: number }).statusCode,
        ),
      ]);
      ws.terminate();
      return result;
    };
    assert.equal(await statusOf('https://evil.example'), 403);
    assert.equal(await statusOf('https://app.good.example'), 101);
    assert.equal(await statusOf(undefined), 101, 'non-browser clients send no Origin');
  });

  test('without allowedOrigins only same-origin browsers pass; an async checkOrigin hook decides when set', async () => {
    const plain = await serverWith();
    const port = new URL(plain.baseUrl).port;
    const open = async (url: string, origin: string) => {
      const ws = new WebSocket(url, { origin });
      ws.on('error', () => {});
      const ok = await Promise.race([
        once(ws, 'open').then(() => true),
        once(ws, 'unexpected-response').then(() => false),
      ]);
      ws.terminate();
      return ok;
    };
    assert.equal(await open(plain.wsUrl, `http://127.0.0.1:${port}`), true);
    assert.equal(await open(plain.wsUrl, 'https://elsewhere.example'), false);
    const hooked = await serverWith({
      hooks: { checkOrigin: async (origin) => origin === 'https://elsewhere.example' },
    });
    assert.equal(await open(hooked.wsUrl, 'https://elsewhere.example'), true);
    assert.equal(await open(hooked.wsUrl, `http://127.0.0.1:${new URL(hooked.baseUrl).port}`), false);
  });
});

describe('slow consumers', () => {
  test('a client that stops reading is disconnected with 3008 instead of buffering without bound', async () => {
    const server = await serverWith({
      namespaces: [{ name: 'chat', allow_subscribe_for_client: true }],
      maxBufferedBytes: 256 * 1024,
    });
    const raw = await rawConnected(server, 'slowpoke');
    raw.send({ id: 2, subscribe: { channel: 'chat:firehose' } });
    await raw.reply(2);
    const socket = (raw.ws as unknown as { _socket: import('node:net').Socket })._socket;
    socket.pause();
    const payload = 'x'.repeat(32 * 1024);
    for (let i = 0; i < 800 && server.engine.stats().clients > 0; i++) {
      await server.engine.publish({ channel: 'chat:firehose', data: { i, payload } });
      if (i % 20 === 0) await sleep(1);
    }
    await waitUntil(() => server.engine.stats().clients === 0, 10_000, 'slow client dropped');
    socket.resume();
    assert.equal(await raw.waitClosed(10_000), 3008);
  });
});

describe('graceful shutdown', () => {
  test('closing a node sends 3001 and the client reconnects to the node that replaces it', async () => {
    const first = await startTestServer({});
    const port = Number(new URL(first.baseUrl).port);
    const c = newClient(first.wsUrl, {
      token: connectionToken('mover'),
      minReconnectDelay: 100,
      maxReconnectDelay: 300,
    });
    cleanups.push(() => c.disconnect());
    const codes: number[] = [];
    c.on('connecting', (ctx) => codes.push(ctx.code));
    c.connect();
    await nextEvent(c, 'connected');
    const reconnected = nextEvent(c, 'connected', 10_000);
    await first.close();
    assert.ok(codes.includes(3001), `connecting codes ${codes}`);
    const second = await serverWith({}, port);
    await reconnected;
    assert.equal(second.engine.stats().clients, 1);
    assert.equal((second.server.address() as AddressInfo).port, port);
  });
});
