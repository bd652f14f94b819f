import WebSocket from 'ws';
import { signHmacJwt } from '../../../packages/realtime/src/tokens/jwt.ts';
import { BENCH_SECRET, optionalImport, type ServerKind } from './servers.ts';

/** A subscriber connection of the load generator; `onTimestamp` gets the `ts` of every publication received. */
export interface BenchClient {
  close(): void;
}

export type OnTimestamp = (ts: number) => void;

const OPEN_TIMEOUT_MS = 30_000;

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} timed out`)), OPEN_TIMEOUT_MS);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * Our engine through raw `ws`, speaking the Centrifugo JSON protocol (connect + subscribe in one frame, pongs to
 * `{}` pings) so the load generator stays cheap; the bench checks separately that the real `centrifuge` client
 * receives too.
 */
function openEngineClient(
  url: string,
  channel: string,
  user: string,
  onTimestamp: OnTimestamp,
): Promise<BenchClient> {
  const token = signHmacJwt({ sub: user }, BENCH_SECRET);
  const ws = new WebSocket(url, { perMessageDeflate: false });
  return withTimeout(
    new Promise<BenchClient>((resolve, reject) => {
      let subscribed = false;
      ws.on('error', reject);
      ws.on('close', (code) => {
        if (!subscribed) reject(new Error(`closed ${code} before subscribing`));
      });
      ws.on('open', () => {
        ws.send(`{"id":1,"connect":{"token":"${token}"}}\n{"id":2,"subscribe":{"channel":"${channel}"}}`);
      });
      ws.on('message', (data) => {
        for (const line of data.toString().split('\n')) {
          if (line === '{}') {
            ws.send('{}');
            continue;
          }
          const reply = JSON.parse(line) as {
            id?: number;
            error?: unknown;
            push?: { pub?: { data?: { ts?: number } } };
          };
          const ts = reply.push?.pub?.data?.ts;
          if (ts !== undefined) onTimestamp(ts);
          else if (reply.error !== undefined)
            reject(new Error(`engine error ${JSON.stringify(reply.error)}`));
          else if (reply.id === 2 && !subscribed) {
            subscribed = true;
            resolve({ close: () => ws.terminate() });
          }
        }
      });
    }),
    'engine subscribe',
  );
}

function openBareWsClient(url: string, channel: string, onTimestamp: OnTimestamp): Promise<BenchClient> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  return withTimeout(
    new Promise<BenchClient>((resolve, reject) => {
      let subscribed = false;
      ws.on('error', reject);
      ws.on('open', () => ws.send(JSON.stringify({ subscribe: channel })));
      ws.on('message', (data) => {
        const message = JSON.parse(data.toString()) as { ts?: number };
        if (message.ts !== undefined) onTimestamp(message.ts);
        else if (!subscribed) {
          subscribed = true;
          resolve({ close: () => ws.terminate() });
        }
      });
    }),
    'ws subscribe',
  );
}

interface SocketIoClientSocket {
  on(event: string, listener: (...args: unknown[]) => void): void;
  emit(event: string, payload: string, ack: () => void): void;
  disconnect(): void;
}
type SocketIoConnect = (url: string, options: object) => SocketIoClientSocket;
let socketIoConnect: SocketIoConnect | undefined;

async function openSocketIoClient(
  url: string,
  channel: string,
  onTimestamp: OnTimestamp,
): Promise<BenchClient> {
  if (socketIoConnect === undefined) {
    const module = await optionalImport<{ io: SocketIoConnect }>('socket.io-client');
    if (module === undefined) throw new Error('socket.io-client is not installed');
    socketIoConnect = module.io;
  }
  const socket = socketIoConnect(url, { transports: ['websocket'], forceNew: true, reconnection: false });
  socket.on('m', (payload) => onTimestamp((JSON.parse(String(payload)) as { ts: number }).ts));
  return withTimeout(
    new Promise<BenchClient>((resolve, reject) => {
      socket.on('connect_error', reject);
      socket.on('connect', () =>
        socket.emit('subscribe', channel, () => resolve({ close: () => socket.disconnect() })),
      );
    }),
    'socket.io subscribe',
  );
}

export function openClient(
  kind: ServerKind,
  port: number,
  channel: string,
  user: string,
  onTimestamp: OnTimestamp,
): Promise<BenchClient> {
  switch (kind) {
    case 'engine':
      return openEngineClient(`ws://127.0.0.1:${port}/connection/websocket`, channel, user, onTimestamp);
    case 'ws':
    case 'wspre':
      return openBareWsClient(`ws://127.0.0.1:${port}`, channel, onTimestamp);
    case 'socketio':
      return openSocketIoClient(`http://127.0.0.1:${port}`, channel, onTimestamp);
  }
}
