import { request as httpRequest } from 'node:http';
import { waitForSettled } from '@parley/testing/wait';
import WebSocket from 'ws';
import { protocolType } from '../../../packages/realtime/src/protocol/schema.ts';
import { containsPing, forEachTimestamp, type OnTimestamp } from './receive.ts';

/**
 * Engine subscribers for the transport and format rows (bench/realtime/transports.bench.ts), as cheap as the JSON
 * one in clients.ts: they find deliveries and their `ts` without decoding whole messages, answer pings, and report
 * the bytes they receive.
 */

export interface Receiver {
  onTimestamp: OnTimestamp;
  onBytes: (bytes: number) => void;
  /** A delivery whose payload carries no readable `ts` (a fossil delta). */
  onDelivery?: () => void;
}

interface Opened {
  close(): void;
}

const OPEN_TIMEOUT_MS = 30_000;
const COMMAND = protocolType('Command');
const REPLY = protocolType('Reply');
/** An empty Command, length-delimited: the Protobuf pong. */
const PROTOBUF_PONG = Buffer.from([0]);

/** Reads a varint at `pos`: [value, next position]. */
function readVarint(data: Buffer, pos: number): [number, number] {
  let value = 0;
  let shift = 0;
  let at = pos;
  for (;;) {
    const byte = data[at++]!;
    value += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return [value, at];
    shift += 7;
  }
}

function openProtobuf(port: number, channel: string, token: string, receiver: Receiver): Promise<Opened> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/connection/websocket`, 'centrifuge-protobuf', {
    perMessageDeflate: false,
  });
  return waitForSettled(
    new Promise<Opened>((resolve, reject) => {
      let subscribed = false;
      ws.on('error', reject);
      ws.on('open', () => {
        ws.send(
          Buffer.concat([
            COMMAND.encodeDelimited({ id: 1, connect: { token } }).finish(),
            COMMAND.encodeDelimited({ id: 2, subscribe: { channel } }).finish(),
          ]),
        );
      });
      ws.on('message', (data: Buffer) => {
        if (subscribed) {
          receiver.onBytes(data.length);
          // Length-delimited replies: an empty one is a ping; the others are publications whose JSON data holds `ts`.
          for (let pos = 0; pos < data.length; ) {
            const [length, start] = readVarint(data, pos);
            if (length === 0) ws.send(PROTOBUF_PONG);
            else forEachTimestamp(data.toString('latin1', start, start + length), receiver.onTimestamp);
            pos = start + length;
          }
          return;
        }
        const reader = { buffer: data, pos: 0 };
        while (reader.pos < data.length) {
          const [length, start] = readVarint(data, reader.pos);
          reader.pos = start + length;
          if (length === 0) {
            ws.send(PROTOBUF_PONG);
            continue;
          }
          const reply = REPLY.toObject(REPLY.decode(data.subarray(start, start + length))) as {
            id?: number;
            error?: unknown;
          };
          if (reply.error !== undefined) reject(new Error(`engine error ${JSON.stringify(reply.error)}`));
          else if (reply.id === 2) {
            subscribed = true;
            resolve({ close: () => ws.terminate() });
          }
        }
      });
    }),
    OPEN_TIMEOUT_MS,
    'protobuf subscribe',
  );
}

function openDelta(port: number, channel: string, token: string, receiver: Receiver): Promise<Opened> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/connection/websocket`, { perMessageDeflate: false });
  return waitForSettled(
    new Promise<Opened>((resolve, reject) => {
      let subscribed = false;
      ws.on('error', reject);
      ws.on('open', () => {
        ws.send(
          `{"id":1,"connect":{"token":"${token}"}}\n{"id":2,"subscribe":{"channel":"${channel}","delta":"fossil"}}`,
        );
      });
      ws.on('message', (data: Buffer) => {
        const text = data.toString();
        if (subscribed) {
          receiver.onBytes(data.length);
          for (let at = text.indexOf('"pub":'); at >= 0; at = text.indexOf('"pub":', at + 6)) {
            receiver.onDelivery?.();
          }
          if (containsPing(text)) ws.send('{}');
          return;
        }
        for (const line of text.split('\n')) {
          if (line === '{}') ws.send('{}');
          else if ((JSON.parse(line) as { id?: number }).id === 2) {
            subscribed = true;
            resolve({ close: () => ws.terminate() });
          }
        }
      });
    }),
    OPEN_TIMEOUT_MS,
    'delta subscribe',
  );
}

function openHttpStream(port: number, channel: string, token: string, receiver: Receiver): Promise<Opened> {
  return waitForSettled(
    new Promise<Opened>((resolve, reject) => {
      let subscribed = false;
      let session = '';
      let node = '';
      let rest = '';
      const pong = () =>
        fetch(`http://127.0.0.1:${port}/emulation`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ session, node, data: '{}' }),
        }).then((r) => r.body?.cancel());
      const request = httpRequest(
        {
          host: '127.0.0.1',
          port,
          path: '/connection/http_stream',
          method: 'POST',
          agent: false,
          headers: { 'Content-Type': 'application/json' },
        },
        (response) => {
          response.on('data', (chunk: Buffer) => {
            const text = rest + chunk.toString();
            const end = text.lastIndexOf('\n');
            rest = text.slice(end + 1);
            const complete = text.slice(0, end);
            if (subscribed) {
              receiver.onBytes(chunk.length);
              forEachTimestamp(complete, receiver.onTimestamp);
              if (containsPing(complete)) void pong();
              return;
            }
            for (const line of complete.split('\n')) {
              if (line === '{}') {
                void pong();
                continue;
              }
              const reply = JSON.parse(line) as {
                id?: number;
                error?: unknown;
                connect?: { session: string; node: string };
              };
              if (reply.error !== undefined) reject(new Error(`engine error ${JSON.stringify(reply.error)}`));
              if (reply.connect) ({ session, node } = reply.connect);
              if (reply.id === 2) {
                subscribed = true;
                resolve({ close: () => request.destroy() });
              }
            }
          });
          response.on('error', () => {});
        },
      );
      request.on('error', reject);
      request.end(`{"id":1,"connect":{"token":"${token}"}}\n{"id":2,"subscribe":{"channel":"${channel}"}}`);
    }),
    OPEN_TIMEOUT_MS,
    'http_stream subscribe',
  );
}

/** An engine subscriber in `mode` (JSON over WebSocket is `openClient`'s own). */
export function openEngineClientIn(
  mode: 'protobuf' | 'http_stream' | 'delta',
  port: number,
  channel: string,
  token: string,
  receiver: Receiver,
): Promise<Opened> {
  switch (mode) {
    case 'protobuf':
      return openProtobuf(port, channel, token, receiver);
    case 'http_stream':
      return openHttpStream(port, channel, token, receiver);
    case 'delta':
      return openDelta(port, channel, token, receiver);
  }
}
