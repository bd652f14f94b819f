import WebSocket from 'ws';
import { signHmacJwt } from '../../../packages/realtime/src/tokens/jwt.ts';
import { BENCH_SECRET, optionalImport, type ServerKind } from './servers.ts';

/** A subscriber connection of the load generator; `onTimestamp` gets the `ts` of every publication received. */
export interface BenchClient {
  close(): void;
}

export type OnTimestamp = (ts: number) => void;

const OPEN_TIMEOUT_MS = 30_000;
const TS_KEY = '"ts":';

/**
 * Reports the `ts` of every publication in a received text without parsing the whole JSON: the load generator
 * shares the CPU with the server, so its per-message cost must stay small and equal for every peer.
 */
function forEachTimestamp(text: string, onTimestamp: OnTimestamp): number {
  let found = 0;
  for (let at = text.indexOf(TS_KEY); at >= 0; at = text.indexOf(TS_KEY, at + TS_KEY.length)) {
    onTimestamp(Number.parseFloat(text.slice(at + TS_KEY.length, at + TS_KEY.length + 24)));
    found++;
  }
  return found;
}

/** A Centrifugo server ping is an empty reply `{}`, alone or as one line of a batched frame (brief §1.5). */
function containsPing(text: string): boolean {
  return text === '{}' || text.startsWith('{}\n') || text.endsWith('\n{}') || text.includes('\n{}\n');
}

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
        const text = data.toString();
        if (subscribed) {
          forEachTimestamp(text, onTimestamp);
          if (containsPing(text)) ws.send('{}');
          return;
        }
        for (const line of text.split('\n')) {
          if (line === '{}') {
            ws.send('{}');
            continue;
          }
          const reply = JSON.parse(line) as { id?: number; error?: unknown };
          if (reply.error !== undefined) reject(new Error(`engine error ${JSON.stringify(reply.error)}`));
          else if (reply.id === 2) {
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
        if (forEachTimestamp(data.toString(), onTimestamp) === 0 && !subscribed) {
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
  socket.on('m', (payload) => forEachTimestamp(String(payload), onTimestamp));
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
      return openBareWsClient(`ws://127.0.0.1:${port}`, channel, onTimestamp);
    case 'socketio':
      return openSocketIoClient(`http://127.0.0.1:${port}`, channel, onTimestamp);
  }
}
