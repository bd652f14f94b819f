import { waitForSettled } from '@parley/testing/wait';
import WebSocket from 'ws';
import { signHmacJwt } from '../../../packages/realtime/src/tokens/jwt.ts';
import { containsPing, forEachTimestamp, type OnTimestamp } from './receive.ts';
import { BENCH_SECRET, optionalImport, type ServerKind } from './servers.ts';
import { openEngineClientIn } from './transport-clients.ts';

/** A subscriber connection of the load generator; `onTimestamp` gets the `ts` of every publication received. */
export interface BenchClient {
  close(): void;
}

export type { OnTimestamp } from './receive.ts';
/** Bytes of each message or chunk received (WebSocket payload, HTTP body chunk), for bytes per delivery. */
export type OnBytes = (bytes: number) => void;

/**
 * How an engine subscriber speaks (bench/realtime/transports.bench.ts): JSON or Protobuf over WebSocket, JSON over
 * HTTP-streaming, or JSON over WebSocket with fossil deltas.
 */
export type EngineMode = 'json' | 'protobuf' | 'http_stream' | 'delta';

const OPEN_TIMEOUT_MS = 30_000;
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
  onBytes: OnBytes,
): Promise<BenchClient> {
  const token = signHmacJwt({ sub: user }, BENCH_SECRET);
  const ws = new WebSocket(url, { perMessageDeflate: false });
  return waitForSettled(
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
          onBytes((data as Buffer).length);
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
    OPEN_TIMEOUT_MS,
    'engine subscribe',
  );
}

function openBareWsClient(
  url: string,
  channel: string,
  onTimestamp: OnTimestamp,
  onBytes: OnBytes,
): Promise<BenchClient> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  return waitForSettled(
    new Promise<BenchClient>((resolve, reject) => {
      let subscribed = false;
      ws.on('error', reject);
      ws.on('open', () => ws.send(JSON.stringify({ subscribe: channel })));
      ws.on('message', (data) => {
        if (subscribed) onBytes((data as Buffer).length);
        if (forEachTimestamp(data.toString(), onTimestamp) === 0 && !subscribed) {
          subscribed = true;
          resolve({ close: () => ws.terminate() });
        }
      });
    }),
    OPEN_TIMEOUT_MS,
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
  return waitForSettled(
    new Promise<BenchClient>((resolve, reject) => {
      socket.on('connect_error', reject);
      socket.on('connect', () =>
        socket.emit('subscribe', channel, () => resolve({ close: () => socket.disconnect() })),
      );
    }),
    OPEN_TIMEOUT_MS,
    'socket.io subscribe',
  );
}

export function openClient(
  kind: ServerKind,
  port: number,
  channel: string,
  user: string,
  onTimestamp: OnTimestamp,
  onBytes: OnBytes = () => {},
  mode: EngineMode = 'json',
  onDelivery?: () => void,
): Promise<BenchClient> {
  switch (kind) {
    case 'engine':
      return mode === 'json'
        ? openEngineClient(`ws://127.0.0.1:${port}/connection/websocket`, channel, user, onTimestamp, onBytes)
        : openEngineClientIn(mode, port, channel, signHmacJwt({ sub: user }, BENCH_SECRET), {
            onTimestamp,
            onBytes,
            ...(onDelivery ? { onDelivery } : {}),
          });
    case 'ws':
      return openBareWsClient(`ws://127.0.0.1:${port}`, channel, onTimestamp, onBytes);
    case 'socketio':
      return openSocketIoClient(`http://127.0.0.1:${port}`, channel, onTimestamp);
  }
}
