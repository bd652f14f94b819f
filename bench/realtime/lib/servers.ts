import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { createRealtimeEngine, silentLogger } from '../../../packages/realtime/src/index.ts';

/** The three peers of the fan-out comparison, each behind the same tiny interface. */
export type ServerKind = 'engine' | 'ws' | 'socketio';

export interface BenchServer {
  port: number;
  /**
   * Server-side publish of a JSON text to every subscriber of `channel`; `delta` publishes it for fossil-delta
   * delivery (our engine only).
   */
  publish(channel: string, payload: string, delta?: boolean): void;
  connections(): number;
  close(): Promise<void>;
}

export const BENCH_SECRET = 'bench-secret-key-of-sufficient-length';
/** Namespace of the bench channels on our engine: the webchat configuration (history 100 / 1 h, recovery). */
export const ENGINE_NAMESPACE = 'bench';

async function listen(server: ReturnType<typeof createServer>): Promise<number> {
  server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 });
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

async function startEngine(): Promise<BenchServer> {
  const engine = await createRealtimeEngine({
    token: { hmacSecretKeys: [BENCH_SECRET] },
    logger: silentLogger,
    namespaces: [
      {
        name: ENGINE_NAMESPACE,
        history_size: 100,
        history_ttl: '1h',
        force_recovery: true,
        allow_subscribe_for_client: true,
        // For the delta row of transports.bench.ts; subscribers that do not ask for deltas are unaffected.
        allowed_delta_types: ['fossil'],
      },
    ],
  });
  // HTTP-streaming connections and their /emulation requests go to the engine too (transports.bench.ts).
  const server = createServer(async (request, response) => {
    if (!(await engine.httpHandler(request, response))) response.writeHead(404).end();
  });
  engine.attach(server);
  const port = await listen(server);
  return {
    port,
    publish(channel, payload, delta) {
      engine
        .publish({ channel, rawData: payload, ...(delta ? { delta: true } : {}) })
        .catch((error: unknown) => {
          console.error('engine publish failed', error);
        });
    },
    connections: () => engine.stats().sockets,
    async close() {
      await engine.close({ timeoutMs: 200 });
      server.closeAllConnections();
      server.close();
    },
  };
}

/**
 * The baseline: a bare `ws` broadcast server. Clients send `{"subscribe":"<channel>"}`, the server keeps
 * channel → Set<socket> and sends each published string to the set.
 */
async function startBareWs(): Promise<BenchServer> {
  const server = createServer((_request, response) => response.writeHead(404).end());
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  const channels = new Map<string, Set<WebSocket>>();
  wss.on('connection', (ws) => {
    const joined: string[] = [];
    ws.on('message', (data) => {
      const channel = (JSON.parse(data.toString()) as { subscribe: string }).subscribe;
      let set = channels.get(channel);
      if (set === undefined) {
        set = new Set();
        channels.set(channel, set);
      }
      set.add(ws);
      joined.push(channel);
      ws.send(`{"subscribed":${JSON.stringify(channel)}}`);
    });
    ws.on('close', () => {
      for (const channel of joined) channels.get(channel)?.delete(ws);
    });
    ws.on('error', () => {});
  });
  const port = await listen(server);
  return {
    port,
    publish(channel, payload) {
      const set = channels.get(channel);
      if (set) for (const ws of set) ws.send(payload);
    },
    connections: () => wss.clients.size,
    async close() {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      server.close();
    },
  };
}

interface SocketIoSocket {
  on(event: string, listener: (...args: unknown[]) => void): void;
  join(room: string): void;
}

interface SocketIoServer {
  on(event: 'connection', listener: (socket: SocketIoSocket) => void): void;
  to(room: string): { emit(event: string, payload: string): void };
  engine: { clientsCount: number };
  close(): void;
}

/** Loads an optional package; the bench reports the peer as missing instead of failing to compile or run. */
export async function optionalImport<T>(name: string): Promise<T | undefined> {
  try {
    return (await import(name)) as T;
  } catch {
    return undefined;
  }
}

async function startSocketIo(): Promise<BenchServer> {
  const module = await optionalImport<{
    Server: new (server: unknown, options: object) => SocketIoServer;
  }>('socket.io');
  if (module === undefined) throw new Error('socket.io is not installed');
  const server = createServer();
  const io = new module.Server(server, {
    transports: ['websocket'],
    perMessageDeflate: false,
    serveClient: false,
  });
  io.on('connection', (socket) => {
    socket.on('subscribe', (channel, ack) => {
      socket.join(String(channel));
      if (typeof ack === 'function') ack('ok');
    });
  });
  const port = await listen(server);
  return {
    port,
    publish(channel, payload) {
      io.to(channel).emit('m', payload);
    },
    connections: () => io.engine.clientsCount,
    async close() {
      io.close();
      server.close();
    },
  };
}

export function startServer(kind: ServerKind): Promise<BenchServer> {
  switch (kind) {
    case 'engine':
      return startEngine();
    case 'ws':
      return startBareWs();
    case 'socketio':
      return startSocketIo();
  }
}
