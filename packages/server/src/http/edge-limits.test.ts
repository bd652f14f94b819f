import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor, waitForSettled } from '@parley/testing/wait';
import {
  createCompanyWithSlowEmployee,
  createConversation,
  EnvelopeLog,
  newVisitor,
  sdkPost,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import { Centrifuge } from 'centrifuge';
import { EventSource } from 'eventsource';
import WebSocket from 'ws';

/**
 * The HTTP edge's time limits and per-address connection cap (src/http/time-limits.ts, connection-limits.ts;
 * docs/config.md "HTTP edge"), on a server whose limits are a few hundred milliseconds. The mechanisms live in
 * front of the store, so one store is enough here.
 */

const LIMIT_MS = 400;
/** Comfortably past every limit (Node checks its own every LIMIT_MS / 5), on a loaded machine. */
const WELL_PAST_MS = 6 * LIMIT_MS;

/** A raw client socket: what it received, and whether and when the server closed it. */
interface RawClient {
  socket: net.Socket;
  received(): string;
  closed: Promise<void>;
  isClosed(): boolean;
}

/**
 * Opens a socket (optionally from another loopback address). `attacker`: the client never closes its side when
 * the server does and keeps writing (`trickle`), so only the server destroying the socket ends it.
 */
function openRaw(
  server: TestServer,
  options: { from?: string; attacker?: boolean } = {},
): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({
      port: Number(new URL(server.baseUrl).port),
      host: '127.0.0.1',
      localAddress: options.from,
      allowHalfOpen: options.attacker === true,
    });
    const chunks: Buffer[] = [];
    let isClosed = false;
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', () => undefined);
    const closed = new Promise<void>((done) =>
      socket.once('close', () => {
        isClosed = true;
        done();
      }),
    );
    socket.once('connect', () =>
      resolve({
        socket,
        received: () => Buffer.concat(chunks).toString('utf8'),
        closed,
        isClosed: () => isClosed,
      }),
    );
    socket.once('error', reject);
  });
}

/** Writes one byte every `everyMs` while the socket is writable (the slow client), until stopped. */
function trickle(client: RawClient, everyMs: number): () => void {
  const timer = setInterval(() => {
    if (client.socket.writable) client.socket.write('x');
  }, everyMs);
  return () => clearInterval(timer);
}

/**
 * Resolves when the server has seen a request matching `match` and that request closed (Node's IncomingMessage
 * `close`, here because its connection was cut): the moment a route still reading its body gives up. Call before
 * sending the request.
 */
function serverSideClose(server: TestServer, match: (request: IncomingMessage) => boolean): Promise<void> {
  return new Promise((resolve) => {
    const onRequest = (request: IncomingMessage) => {
      if (!match(request)) return;
      server.app.server.off('request', onRequest);
      request.once('close', () => resolve());
    };
    server.app.server.on('request', onRequest);
  });
}

/** Resolves when the server has read the headers of a request matching `match`. Call before sending the request. */
function serverReceived(server: TestServer, match: (request: IncomingMessage) => boolean): Promise<void> {
  return new Promise((resolve) => {
    const onRequest = (request: IncomingMessage) => {
      if (!match(request)) return;
      server.app.server.off('request', onRequest);
      resolve();
    };
    server.app.server.on('request', onRequest);
  });
}

function problemIn(text: string): { status: number; code: string; requestId?: string; headers: string } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const parsed = JSON.parse(body) as { code: string; request_id?: string };
  return {
    status: Number(head.split(' ')[1]),
    code: parsed.code,
    requestId: parsed.request_id,
    headers: head,
  };
}

describe('HTTP edge: time limits', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      config: {
        http: {
          headersTimeoutMs: LIMIT_MS,
          bodyTimeoutMs: LIMIT_MS,
          keepAliveTimeoutMs: LIMIT_MS,
        },
      },
    });
  });
  after(() => server.close());

  it('answers a body that stops arriving 408 request_timeout and destroys the connection, however the client trickles', async () => {
    // An unknown route reads its body like any other before it answers 404.
    const client = await openRaw(server, { attacker: true });
    const routeGaveUp = serverSideClose(server, (r) => r.headers['x-request-id'] === 'slow-body-1');
    client.socket.write(
      'POST /no-such-route HTTP/1.1\r\nHost: x\r\nX-Request-Id: slow-body-1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a":',
    );
    const stop = trickle(client, 50);
    try {
      await waitForSettled(client.closed, 10_000, 'the server to close the slow body');
    } finally {
      stop();
    }
    const problem = problemIn(client.received());
    assert.equal(problem.status, 408);
    assert.equal(problem.code, 'request_timeout');
    assert.equal(problem.requestId, 'slow-body-1');
    assert.match(problem.headers, /\r\nconnection: close/i);
    // The route still waiting for that body gives up quietly: a cut connection is no server error.
    await waitForSettled(routeGaveUp, 5_000, 'the server-side request to close');
    // Bounded absence check: an error line would follow that close within a few ticks, and is no event to wait for.
    await sleep(50);
    const errors = server.logs.filter((l) => JSON.parse(l).level >= 50);
    assert.deepEqual(errors, []);
  });

  it('answers headers that stop arriving 408 and destroys the connection', async () => {
    const client = await openRaw(server, { attacker: true });
    client.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    const stop = trickle(client, 50);
    try {
      await waitForSettled(client.closed, 10_000, 'the server to close the slow headers');
    } finally {
      stop();
    }
    const problem = problemIn(client.received());
    assert.equal(problem.status, 408);
    assert.equal(problem.code, 'request_timeout');
  });

  it('closes a connection that never sends a byte, and a kept-alive one left idle', async () => {
    const silent = await openRaw(server);
    await waitForSettled(silent.closed, 10_000, 'a silent connection to be closed');

    const idle = await openRaw(server);
    idle.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor('the health answer', () => idle.received().includes('\r\n\r\n'), 5_000);
    assert.match(idle.received(), /^HTTP\/1\.1 200/);
    await waitForSettled(idle.closed, 10_000, 'the idle kept-alive connection to be closed');
  });

  it('serves a body that arrives slowly but in time', async () => {
    const client = await openRaw(server);
    const body = '{}';
    client.socket.write(
      `POST /no-such-route HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
    );
    // The pauses are the input (a body dribbled slowly, each gap well within the limit), not a wait for anything.
    await sleep(LIMIT_MS / 4);
    client.socket.write(body[0]!);
    await sleep(LIMIT_MS / 4);
    client.socket.write(body[1]!);
    await waitForSettled(client.closed, 10_000, 'the answer');
    assert.equal(problemIn(client.received()).code, 'route_not_found');
  });

  it('keeps WebSocket, HTTP-streaming and SSE connections open well past every limit, and they still deliver', async () => {
    const { company } = await createCompanyWithSlowEmployee(server, 'Long-lived', { words: 2, delayMs: 10 });
    const companyId = company.id;
    for (const transport of ['websocket', 'http_stream', 'sse'] as const) {
      const visitor = newVisitor(companyId);
      const conversation = await createConversation(server, visitor);
      const token = (await sdkPost(server, visitor, '/auth/connect-token')).body.connection_token;
      const base = server.baseUrl;
      const client = new Centrifuge(
        [
          transport === 'websocket'
            ? { transport: 'websocket', endpoint: `${base.replace('http', 'ws')}/connection/websocket` }
            : { transport, endpoint: `${base}/connection/${transport === 'sse' ? 'sse' : 'http_stream'}` },
        ],
        {
          websocket: WebSocket,
          eventsource: EventSource,
          token,
          emulationEndpoint: `${base}/emulation`,
          timeout: 10_000,
        },
      );
      const log = new EnvelopeLog();
      const sub = client.newSubscription(conversation.channel, {
        getToken: async () =>
          (await sdkPost(server, visitor, '/auth/subscribe-token', { conversation_id: conversation.id })).body
            .subscription_token,
      });
      sub.on('publication', (ctx) => log.push(ctx.data as never));
      let disconnects = 0;
      client.on('disconnected', () => disconnects++);
      client.on('connecting', (ctx) => {
        if (ctx.code !== 0) disconnects++;
      });
      try {
        client.connect();
        sub.subscribe();
        await waitForSettled(sub.ready(), 15_000, `${transport} subscribe`);
        // Bounded absence check: staying connected is no event to wait for, so real time runs past every limit.
        await sleep(WELL_PAST_MS);
        assert.equal(client.state, 'connected', `${transport} still connected`);
        await waitForSettled(sendMessage(sub, 'hello'), 10_000, `${transport} publish`);
        await log.waitFor((e) =>
          e.some((x) => x.operation === 'complete' && x.message_snapshot.role !== 'user'),
        );
        assert.equal(disconnects, 0, `${transport} never reconnected`);
      } finally {
        client.disconnect();
      }
    }
  });
});

describe('HTTP edge: connections per address', () => {
  const CAP = 4;

  describe('without a proxy: TCP connections per peer address', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ config: { http: { maxConnectionsPerAddress: CAP } } });
    });
    after(() => server.close());

    it('answers the connection over the cap 503 too_many_connections at once and closes it; other addresses are served', async () => {
      // 127.0.0.2 is the flooding address; the health check comes from 127.0.0.1.
      const held: RawClient[] = [];
      for (let i = 0; i < CAP; i++) held.push(await openRaw(server, { from: '127.0.0.2', attacker: true }));
      // Slowloris: headers that never end.
      for (const c of held) c.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ');
      const stops = held.map((c) => trickle(c, 100));
      try {
        const over = await openRaw(server, { from: '127.0.0.2', attacker: true });
        stops.push(trickle(over, 50));
        await waitForSettled(over.closed, 10_000, 'the connection over the cap to be closed');
        const problem = problemIn(over.received());
        assert.equal(problem.status, 503);
        assert.equal(problem.code, 'too_many_connections');
        assert.match(problem.headers, /\r\nretry-after: 5/i);

        const health = await http(`${server.baseUrl}/healthz`);
        assert.equal(health.status, 200);
        assert.ok(
          held.every((c) => !c.isClosed()),
          'the admitted connections stay open',
        );

        // One admitted connection closes: the address may open one again.
        stops.shift()!();
        held.shift()!.socket.destroy();
        await waitFor(
          'a connection admitted again',
          async () => {
            const again = await openRaw(server, { from: '127.0.0.2' });
            again.socket.end('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
            await again.closed;
            return again.received().startsWith('HTTP/1.1 200');
          },
          5_000,
        );
      } finally {
        for (const stop of stops) stop();
        for (const c of held) c.socket.destroy();
      }
      const metrics = server.ctx.metrics.registry.getSingleMetric('parley_http_connections_refused_total');
      const values = (await metrics!.get()).values;
      assert.ok(values.some((v) => v.labels.reason === 'too_many_connections' && v.value >= 1));
    });
  });

  describe('behind a trusted proxy: requests and WebSockets per forwarded address', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({
        config: { trustProxy: true, http: { maxConnectionsPerAddress: 2, bodyTimeoutMs: 10_000 } },
      });
    });
    after(() => server.close());

    /** A request from `forwarded` held in flight: its headers arrived, its body not yet. */
    async function inFlight(forwarded: string): Promise<RawClient> {
      const client = await openRaw(server);
      client.socket.write(
        `POST /no-such-route HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: ${forwarded}, 10.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{`,
      );
      return client;
    }

    it('refuses the forwarded address over the cap, not the proxy, and admits it again when a request ends', async () => {
      const held = [await inFlight('203.0.113.7'), await inFlight('203.0.113.7')];
      try {
        // The held requests count once the server has read their headers: the refusal itself is the event.
        const over = await waitFor(
          'the forwarded address refused over its cap',
          async () => {
            const answer = await http(`${server.baseUrl}/healthz`, {
              headers: { 'x-forwarded-for': '203.0.113.7' },
            });
            return answer.status === 503 && answer;
          },
          5_000,
        );
        assert.equal(over.status, 503, over.text);
        assert.equal(over.body.code, 'too_many_connections');
        assert.equal(over.headers.get('retry-after'), '5');
        assert.equal(over.body.request_id, over.headers.get('x-request-id'));
        const other = await http(`${server.baseUrl}/healthz`, {
          headers: { 'x-forwarded-for': '203.0.113.8' },
        });
        assert.equal(other.status, 200);

        const ws = new WebSocket(`${server.baseUrl.replace('http', 'ws')}/connection/websocket`, {
          headers: { 'x-forwarded-for': '203.0.113.7' },
        });
        const status = await new Promise<number>((resolve) => {
          ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
          ws.on('open', () => resolve(101));
          ws.on('error', () => undefined);
        });
        ws.terminate();
        assert.equal(status, 503);
      } finally {
        for (const c of held) c.socket.destroy();
      }
      await waitFor(
        'the address admitted again',
        async () =>
          (await http(`${server.baseUrl}/healthz`, { headers: { 'x-forwarded-for': '203.0.113.7' } }))
            .status === 200,
        5_000,
      );
    });
  });
});

describe('HTTP edge: closing', () => {
  it('closes a kept-alive connection whose response ends after the server began closing, without waiting for its idle time-out', async () => {
    const server = await startTestServer();
    const client = await openRaw(server);
    const received = serverReceived(server, (r) => r.url === '/no-such-route');
    // A request in flight when the close begins: its body is half there.
    client.socket.write(
      'POST /no-such-route HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{',
    );
    await waitForSettled(received, 5_000, 'the server to read the request headers');
    const closing = server.close();
    // Fastify runs its preClose hooks, then stops listening: from then on the server is closing.
    await waitFor('the server to stop listening', () => !server.app.server.listening, 5_000, 5);
    client.socket.write('}');
    // Answered (kept alive: the client did not ask to close), then closed by the server long before the 72 s of
    // PARLEY_KEEP_ALIVE_TIMEOUT_MS.
    await waitForSettled(client.closed, 10_000, 'the connection to close');
    assert.match(client.received(), /^HTTP\/1\.1 404/);
    await waitForSettled(closing, 10_000, 'the server to close');
  });
});
