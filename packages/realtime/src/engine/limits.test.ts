import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import WebSocket from 'ws';
import { DisconnectError } from '../protocol/errors.ts';
import {
  closedAfterAll,
  connectionToken,
  connectRawClient,
  newClient,
  RawClient,
  sleep,
  startTestServer,
  subscriptionToken,
  type TestServer,
  waitFor,
  waitForEvent,
} from '../testing/harness.ts';

/** Limits and hygiene: channel limit, name length, command rate, origins, slow consumers, shutdown. */

const cleanups = closedAfterAll();

async function startServer(
  options: Parameters<typeof startTestServer>[0] = {},
  port = 0,
): Promise<TestServer> {
  const server = await startTestServer({ namespaces: [{ name: 'chat' }], ...options }, port);
  cleanups.push(() => server.close());
  return server;
}

async function connectRaw(
  server: TestServer,
  user: string,
  options: WebSocket.ClientOptions = {},
): Promise<RawClient> {
  const raw = await connectRawClient(server.wsUrl, connectionToken(user), options);
  cleanups.push(() => raw.close());
  return raw;
}

describe('subscription limits', () => {
  test('more channels than channelLimit answers 106, a too long name 107', async () => {
    const server = await startServer({ channelLimit: 2, channelRules: { maxLength: 20 } });
    const raw = await connectRaw(server, 'u1');
    const subscribe = (id: number, channel: string) =>
      raw.send({ id, subscribe: { channel, token: subscriptionToken('u1', channel) } });
    subscribe(2, 'chat:1');
    subscribe(3, 'chat:2');
    subscribe(4, 'chat:3');
    assert.ok((await raw.waitForReply(2)).subscribe);
    assert.ok((await raw.waitForReply(3)).subscribe);
    assert.deepEqual((await raw.waitForReply(4)).error, { code: 106, message: 'limit exceeded' });
    raw.send({ id: 5, unsubscribe: { channel: 'chat:1' } });
    await raw.waitForReply(5);
    subscribe(6, `chat:${'x'.repeat(30)}`);
    assert.deepEqual((await raw.waitForReply(6)).error, { code: 107, message: 'bad request' });
  });

  test('the centrifuge client ends a subscription over the limit with code 106', async () => {
    const server = await startServer({ channelLimit: 1 });
    const c = newClient(server.wsUrl, { token: connectionToken('u2') });
    cleanups.push(() => c.disconnect());
    const subToken = async ({ channel }: { channel: string }) => subscriptionToken('u2', channel);
    const first = c.newSubscription('chat:a', { getToken: subToken });
    const second = c.newSubscription('chat:b', { getToken: subToken });
    c.connect();
    first.subscribe();
    await waitForEvent(first, 'subscribed');
    const ended = waitForEvent<{ code: number }>(second, 'unsubscribed');
    second.subscribe();
    assert.equal((await ended).code, 106);
  });

  test('userConnectionLimit closes the extra connection with 3504', async () => {
    const server = await startServer({ userConnectionLimit: 1 });
    await connectRaw(server, 'solo');
    const extra = new RawClient(server.wsUrl);
    cleanups.push(() => extra.close());
    await extra.opened;
    extra.send({ id: 1, connect: { token: connectionToken('solo') } });
    assert.equal(await extra.waitForClose(), 3504);
  });
});

describe('command rate', () => {
  test('commands over the rate get 111, a client that keeps flooding is closed with 3013', async () => {
    const server = await startServer({ commandRate: { perSecond: 1, burst: 4 } });
    const raw = await connectRaw(server, 'u3');
    const commands = [2, 3, 4, 5, 6].map((id) => ({ id, unsubscribe: { channel: `chat:${id}` } }));
    raw.send(...commands);
    assert.deepEqual((await raw.waitForReply(2)).unsubscribe, {});
    assert.deepEqual((await raw.waitForReply(4)).unsubscribe, {});
    assert.deepEqual((await raw.waitForReply(5)).error, {
      code: 111,
      message: 'too many requests',
      temporary: true,
    });
    assert.deepEqual((await raw.waitForReply(6)).error, {
      code: 111,
      message: 'too many requests',
      temporary: true,
    });
    const flood = Array.from({ length: 150 }, (_, i) => ({
      id: 100 + i,
      unsubscribe: { channel: 'chat:f' },
    }));
    raw.send(...flood);
    assert.equal(await raw.waitForClose(), 3013);
  });
});

describe('origins', () => {
  test('a browser origin outside allowedOrigins is refused with 403 at upgrade', async () => {
    const server = await startServer({ allowedOrigins: ['https://*.good.example'] });
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
    const plain = await startServer();
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
    const hooked = await startServer({
      hooks: { checkOrigin: async (origin) => origin === 'https://elsewhere.example' },
    });
    assert.equal(await open(hooked.wsUrl, 'https://elsewhere.example'), true);
    assert.equal(await open(hooked.wsUrl, `http://127.0.0.1:${new URL(hooked.baseUrl).port}`), false);
  });
});

describe('slow consumers', () => {
  test('a client that stops reading is disconnected with 3008 instead of buffering without bound', async () => {
    const server = await startServer({
      namespaces: [{ name: 'chat', allow_subscribe_for_client: true }],
      maxBufferedBytes: 256 * 1024,
    });
    const raw = await connectRaw(server, 'slowpoke');
    raw.send({ id: 2, subscribe: { channel: 'chat:firehose' } });
    await raw.waitForReply(2);
    const socket = (raw.ws as unknown as { _socket: import('node:net').Socket })._socket;
    socket.pause();
    const payload = 'x'.repeat(32 * 1024);
    for (let i = 0; i < 800 && server.engine.stats().clients > 0; i++) {
      await server.engine.publish({ channel: 'chat:firehose', data: { i, payload } });
      if (i % 20 === 0) await sleep(1); // lets the socket's writes and the engine's buffer checks run
    }
    await waitFor('slow client dropped', () => server.engine.stats().clients === 0, 10_000);
    socket.resume();
    assert.equal(await raw.waitForClose(10_000), 3008);
  });
});

describe('back-pressure', () => {
  /**
   * Far below ws's default 30 s close timeout and below the engine's own close-handshake bound
   * (CLOSE_HANDSHAKE_TIMEOUT_MS, 5 s): only a close that completes by itself arrives within it.
   */
  const PROMPT_CLOSE_MS = 4_000;

  /** An `onRpc` hook that blocks every call until `release()`; `calls` counts the calls that started. */
  function blockingRpc(onReleased: () => unknown = () => ({})) {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const state = { calls: 0, release };
    const onRpc = async () => {
      state.calls += 1;
      await gate;
      return onReleased();
    };
    return { state, onRpc };
  }

  /** Sends more commands than the session queues before it pauses the socket (64), all slow to process. */
  async function floodUntilPaused(raw: RawClient, state: { calls: number }): Promise<void> {
    raw.send(...Array.from({ length: 100 }, (_, i) => ({ id: 10 + i, rpc: { method: 'slow', data: {} } })));
    await waitFor('the first slow command started', () => state.calls === 1, 5_000);
  }

  test('a server API disconnect of a paused connection closes the client socket with its code', async () => {
    const { state, onRpc } = blockingRpc();
    const server = await startServer({ hooks: { onRpc } });
    cleanups.push(() => state.release());
    const raw = await connectRaw(server, 'flooder');
    await floodUntilPaused(raw, state);

    await server.engine.disconnectUser('flooder', { code: 4001, reason: 'go away' });

    assert.equal(await raw.waitForClose(PROMPT_CLOSE_MS), 4001, 'closed before the close handshake timeout');
    assert.equal(raw.closeReason, 'go away');
    assert.equal(state.calls, 1, 'the queued commands were dropped, not run');
  });

  test('a DisconnectError from a hook while the socket is paused closes the client socket', async () => {
    const { state, onRpc } = blockingRpc(() => {
      throw new DisconnectError(4002, 'hook refused');
    });
    const server = await startServer({ hooks: { onRpc } });
    const raw = await connectRaw(server, 'flooder');
    await floodUntilPaused(raw, state);

    state.release();

    assert.equal(await raw.waitForClose(PROMPT_CLOSE_MS), 4002, 'closed before the close handshake timeout');
    assert.equal(raw.closeReason, 'hook refused');
    await waitFor('server side socket gone', () => server.engine.stats().sockets === 0, 5_000);
  });

  test('a client that never answers the close frame loses its socket after the close-handshake bound', async () => {
    const server = await startServer();
    const raw = await connectRaw(server, 'deaf');
    const socket = (raw.ws as unknown as { _socket: import('node:net').Socket })._socket;
    socket.pause();

    await server.engine.disconnectUser('deaf', { code: 4003 });

    // Bounded by CLOSE_HANDSHAKE_TIMEOUT_MS (5 s) plus slack, far below ws's default 30 s.
    await waitFor('server destroyed the socket', () => server.engine.stats().sockets === 0, 15_000);
    socket.resume();
    assert.equal(await raw.waitForClose(5_000), 4003, 'the close frame sent before still reaches the client');
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
    await waitForEvent(c, 'connected');
    const reconnected = waitForEvent(c, 'connected', 10_000);
    await first.close();
    assert.ok(codes.includes(3001), `connecting codes ${codes}`);
    const second = await startServer({}, port);
    await reconnected;
    assert.equal(second.engine.stats().clients, 1);
    assert.equal((second.server.address() as AddressInfo).port, port);
  });
});
