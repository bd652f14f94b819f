// Test helper names, the same in every package, faults/ and bench/ (README "Development"): start… runs what must
// be closed; new… builds a client, subscription or broker not yet connected; connect…/subscribe… return one
// connected/subscribed; create… stores a record; waitFor… waits and throws on timeout.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after } from 'node:test';
import { Centrifuge, type Options as CentrifugeOptions } from 'centrifuge';
import WebSocket from 'ws';
import { MemoryBroker, MemoryHub, MemoryPresenceManager } from '../broker/memory.ts';
import { RedisBroker, RedisPresenceManager } from '../broker/redis.ts';
import type { RealtimeEngine } from '../engine/engine.ts';
import { silentLogger } from '../engine/logger.ts';
import type { RealtimeEngineOptions } from '../engine/options.ts';
import { createRealtimeEngine } from '../index.ts';
import { signHmacJwt } from '../tokens/jwt.ts';

/** Test support: a real HTTP server on 127.0.0.1:0 with the engine attached, and real `centrifuge` clients. */

export const SECRET = 'test-secret-key-of-sufficient-length';

export interface TestServer {
  engine: RealtimeEngine;
  server: Server;
  /** ws://127.0.0.1:port/connection/websocket */
  wsUrl: string;
  /** http://127.0.0.1:port/connection/http_stream, …/connection/sse and …/emulation (bidirectional emulation). */
  httpStreamUrl: string;
  sseUrl: string;
  emulationUrl: string;
  /** Method and path of every plain HTTP request served, in order (`POST /emulation`). */
  requests: string[];
  /** http://127.0.0.1:port */
  baseUrl: string;
  close(): Promise<void>;
}

export async function startTestServer(options: RealtimeEngineOptions = {}, port = 0): Promise<TestServer> {
  const engine = await createRealtimeEngine({
    token: { hmacSecretKeys: [SECRET] },
    logger: silentLogger,
    apiKey: 'api-key',
    ...options,
  });
  const requests: string[] = [];
  const server = createServer(async (request, response) => {
    requests.push(`${request.method} ${(request.url ?? '/').split('?')[0]}`);
    const handled =
      (await engine.httpHandler(request, response)) || (await engine.apiHandler(request, response));
    if (!handled) {
      response.statusCode = 404;
      response.end();
    }
  });
  engine.attach(server);
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  return {
    engine,
    server,
    wsUrl: `ws://127.0.0.1:${address.port}/connection/websocket`,
    httpStreamUrl: `http://127.0.0.1:${address.port}/connection/http_stream`,
    sseUrl: `http://127.0.0.1:${address.port}/connection/sse`,
    emulationUrl: `http://127.0.0.1:${address.port}/emulation`,
    requests,
    baseUrl: `http://127.0.0.1:${address.port}`,
    async close() {
      await engine.close({ timeoutMs: 500 });
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The broker and presence manager of one test node (spread into `startTestServer`'s options); every node built by
 * the same backend shares its publications, presence and control messages, as the nodes of one cluster do. Each
 * node closes its own broker and presence manager.
 */
export type NodeBackend = () => Pick<RealtimeEngineOptions, 'broker' | 'presenceManager' | 'closeBroker'>;

/** Nodes on one in-process hub. */
export function newMemoryBackend(): NodeBackend {
  const hub = new MemoryHub();
  return () => ({
    broker: new MemoryBroker({ hub }),
    presenceManager: new MemoryPresenceManager({ hub }),
    closeBroker: true,
  });
}

/** Nodes on the test Redis under a fresh key prefix (`name-<uuid>`), so runs never see each other's keys. */
export function newRedisBackend(name: string): NodeBackend {
  const url = process.env.PARLEY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `${name}-${randomUUID()}`;
  return () => ({
    broker: new RedisBroker({ url, prefix }),
    presenceManager: new RedisPresenceManager({ url, prefix }),
    closeBroker: true,
  });
}

/**
 * A list for the test file to push what it starts onto (servers, clients); once all its tests are done they are
 * closed, the last started first.
 */
export function closedAfterAll(): Array<() => Promise<void> | void> {
  const cleanups: Array<() => Promise<void> | void> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  return cleanups;
}

/** A connection token for `user` valid `ttlSeconds` (default 1 h). */
export function connectionToken(
  user: string,
  claims: Record<string, unknown> = {},
  ttlSeconds = 3600,
): string {
  return signHmacJwt({ sub: user, exp: Math.floor(Date.now() / 1000) + ttlSeconds, ...claims }, SECRET);
}

export function subscriptionToken(
  user: string,
  channel: string,
  claims: Record<string, unknown> = {},
  ttlSeconds = 3600,
): string {
  return signHmacJwt(
    { sub: user, channel, exp: Math.floor(Date.now() / 1000) + ttlSeconds, ...claims },
    SECRET,
  );
}

/** A `centrifuge` client using `ws`; closed automatically by `closeAll`. */
export function newClient(url: string, options: Partial<CentrifugeOptions> = {}): Centrifuge {
  return new Centrifuge(url, { websocket: WebSocket, timeout: 5000, ...options });
}

/** Resolves with the arguments of the next `event` on an emitter-like object, or rejects after `timeoutMs`. */
export function waitForEvent<T = unknown>(
  emitter: { once(event: string, listener: (...args: never[]) => void): unknown },
  event: string,
  timeoutMs = 5000,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${event}`)), timeoutMs);
    emitter.once(event, ((value: T) => {
      clearTimeout(timer);
      resolve(value);
    }) as (...args: never[]) => void);
  });
}

/** Polls `condition` every 10 ms until it holds; throws "timed out waiting for <what>" after `timeoutMs`. */
export async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A raw client that has sent `connect` (command id 1) with `token` and got its reply. */
export async function connectRawClient(
  url: string,
  token: string,
  options: WebSocket.ClientOptions = {},
): Promise<RawClient> {
  const raw = new RawClient(url, options);
  await raw.opened;
  raw.send({ id: 1, connect: { token } });
  await raw.waitForReply(1);
  return raw;
}

/** A raw WebSocket client that collects every received JSON line and the close event. */
export class RawClient {
  readonly ws: WebSocket;
  readonly frames: string[] = [];
  readonly messages: Record<string, unknown>[] = [];
  closeCode: number | undefined;
  closeReason = '';
  readonly opened: Promise<void>;
  readonly closed: Promise<void>;

  constructor(url: string, options: WebSocket.ClientOptions = {}) {
    this.ws = new WebSocket(url, options);
    this.opened = once(this.ws, 'open').then(() => undefined);
    this.closed = new Promise((resolve) => {
      this.ws.on('close', (code, reason) => {
        this.closeCode = code;
        this.closeReason = reason.toString();
        resolve();
      });
    });
    this.ws.on('error', () => {});
    this.ws.on('message', (data) => {
      const text = data.toString();
      this.frames.push(text);
      for (const line of text.split('\n')) this.messages.push(JSON.parse(line));
    });
  }

  send(...commands: object[]): void {
    this.ws.send(commands.map((c) => JSON.stringify(c)).join('\n'));
  }

  /** Waits for a message matching `predicate`. */
  async waitForMessage(
    predicate: (m: Record<string, unknown>) => boolean,
    timeoutMs = 5000,
  ): Promise<Record<string, unknown>> {
    await waitFor('message', () => this.messages.some(predicate), timeoutMs);
    return this.messages.find(predicate)!;
  }

  /** Waits for the reply to command `id`. */
  waitForReply(id: number, timeoutMs = 5000): Promise<Record<string, unknown>> {
    return this.waitForMessage((m) => m.id === id, timeoutMs);
  }

  /** Waits for the socket to close (or `timeoutMs`); the close code, if it closed. */
  async waitForClose(timeoutMs = 5000): Promise<number | undefined> {
    await Promise.race([this.closed, sleep(timeoutMs)]);
    return this.closeCode;
  }

  close(): void {
    this.ws.terminate();
  }
}
