import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Centrifuge, type Options as CentrifugeOptions } from 'centrifuge';
import WebSocket from 'ws';
import type { RealtimeEngineOptions } from '../config/options.ts';
import type { RealtimeEngine } from '../engine/engine.ts';
import { silentLogger } from '../engine/logger.ts';
import { createRealtimeEngine } from '../index.ts';
import { signHmacJwt } from '../tokens/jwt.ts';

/** Test support: a real HTTP server on 127.0.0.1:0 with the engine attached, and real `centrifuge` clients. */

export const SECRET = 'test-secret-key-of-sufficient-length';

export interface TestServer {
  engine: RealtimeEngine;
  server: Server;
  /** ws://127.0.0.1:port/connection/websocket */
  wsUrl: string;
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
  const server = createServer((request, response) => {
    engine.apiHandler(request, response).then((handled) => {
      if (!handled) {
        response.statusCode = 404;
        response.end();
      }
    });
  });
  engine.attach(server);
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  return {
    engine,
    server,
    wsUrl: `ws://127.0.0.1:${address.port}/connection/websocket`,
    baseUrl: `http://127.0.0.1:${address.port}`,
    async close() {
      await engine.close({ timeoutMs: 500 });
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
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
export function nextEvent<T = unknown>(
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

/** Polls `condition` every 10 ms until it holds or `timeoutMs` passes. */
export async function waitUntil(
  condition: () => boolean,
  timeoutMs = 5000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
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
  async waitFor(
    predicate: (m: Record<string, unknown>) => boolean,
    timeoutMs = 5000,
  ): Promise<Record<string, unknown>> {
    await waitUntil(() => this.messages.some(predicate), timeoutMs, 'message');
    return this.messages.find(predicate)!;
  }

  reply(id: number, timeoutMs = 5000): Promise<Record<string, unknown>> {
    return this.waitFor((m) => m.id === id, timeoutMs);
  }

  async waitClosed(timeoutMs = 5000): Promise<number | undefined> {
    await Promise.race([this.closed, sleep(timeoutMs)]);
    return this.closeCode;
  }

  close(): void {
    this.ws.terminate();
  }
}
