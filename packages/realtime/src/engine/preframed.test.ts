import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import * as wsModule from 'ws';
import { WebSocket, WebSocketServer } from 'ws';
import {
  PreframedMessage,
  preframeString,
  preframeText,
  preframingSupported,
  sendParts,
  sendPreframed,
} from './preframed.ts';

/**
 * Guards the `ws` internals `preframed.ts` relies on (checked against ws 8.23.0): if `ws` changes shape these
 * tests fail instead of the engine silently falling back to the slower `ws.send` path.
 */

const servers: WebSocketServer[] = [];
const clients: WebSocket[] = [];

after(async () => {
  for (const client of clients) client.terminate();
  for (const server of servers) await new Promise<void>((resolve) => server.close(() => resolve()));
});

interface Pair {
  server: WebSocket;
  client: WebSocket;
  received: string[];
  /** Resolves once `count` messages have arrived in total. */
  waitForMessages(count: number, timeoutMs?: number): Promise<string[]>;
}

async function connectPair(perMessageDeflate: boolean | { threshold: number } = false): Promise<Pair> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate, clientTracking: false });
  servers.push(wss);
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const port = (wss.address() as AddressInfo).port;
  const serverSide = new Promise<WebSocket>((resolve) => wss.once('connection', resolve));
  const client = new WebSocket(`ws://127.0.0.1:${port}`, { perMessageDeflate: perMessageDeflate !== false });
  clients.push(client);
  const received: string[] = [];
  const waiters: Array<() => void> = [];
  client.on('message', (data, isBinary) => {
    assert.equal(isBinary, false, 'a text frame (opcode 1)');
    received.push(data.toString());
    for (const wake of waiters.splice(0)) wake();
  });
  await new Promise<void>((resolve, reject) => {
    client.once('open', () => resolve());
    client.once('error', reject);
  });
  const server = await serverSide;
  const waitForMessages = async (count: number, timeoutMs = 15_000): Promise<string[]> => {
    const deadline = Date.now() + timeoutMs;
    while (received.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`received ${received.length} of ${count} messages`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return received;
  };
  return { server, client, received, waitForMessages };
}

describe('ws internals used for pre-framed pushes', () => {
  test('the installed ws still exposes Sender.frame and Sender#sendFrame', () => {
    const sender = (
      wsModule as unknown as { Sender?: { frame?: unknown; prototype?: { sendFrame?: unknown } } }
    ).Sender;
    assert.equal(typeof sender?.frame, 'function');
    assert.equal(typeof sender?.prototype?.sendFrame, 'function');
    assert.equal(preframingSupported, true);
  });

  test('a server socket exposes the sender state the guard reads', async () => {
    const { server } = await connectPair();
    const internals = server as unknown as {
      _sender: { _state: unknown; _queue: unknown; _firstFragment: unknown; _bufferedBytes: unknown };
      _isServer: unknown;
      _extensions: unknown;
    };
    assert.equal(internals._isServer, true);
    assert.deepEqual(internals._extensions, {});
    assert.equal(internals._sender._state, 0);
    assert.ok(Array.isArray(internals._sender._queue));
    assert.equal(internals._sender._firstFragment, true);
    assert.equal(internals._sender._bufferedBytes, 0);
  });
});

describe('preframeText', () => {
  test('builds one unmasked final text frame with the RFC 6455 §5.2 length encodings', () => {
    for (const [length, headerBytes, lengthField] of [
      [100, 2, 100],
      [126, 4, 126],
      [65_535, 4, 126],
      [65_536, 10, 127],
    ] as const) {
      const payload = Buffer.alloc(length, 0x61);
      const message = preframeText(payload);
      assert.ok(message instanceof PreframedMessage);
      assert.equal(message.payload, payload);
      const frame = message.frame!;
      assert.equal(frame.length, headerBytes + length);
      assert.equal(frame[0], 0x81, 'FIN + text opcode, no RSV bits');
      assert.equal(frame[1], lengthField, 'no MASK bit: servers never mask (§5.1)');
      if (lengthField === 126) assert.equal(frame.readUInt16BE(2), length);
      if (lengthField === 127) assert.equal(Number(frame.readBigUInt64BE(2)), length);
      assert.ok(frame.subarray(headerBytes).equals(payload));
    }
  });
});

describe('sendPreframed', () => {
  test('a frame written through the sender is received intact by a real ws client', async () => {
    const pair = await connectPair();
    const texts = [
      '{"push":{"channel":"chat:1","pub":{"data":{"text":"hi"},"offset":1}}}',
      JSON.stringify({ text: 'ünïcødé ✓ 😀'.repeat(20) }),
      'y'.repeat(70_000),
    ];
    // Each prebuilt frame is written twice: the buffer is shared between sockets, never consumed.
    const messages = texts.map((text) => preframeText(Buffer.from(text)));
    for (const message of messages) sendPreframed(pair.server, message);
    for (const message of messages) sendPreframed(pair.server, message);
    const received = await pair.waitForMessages(texts.length * 2);
    assert.deepEqual(received, [...texts, ...texts]);
    assert.equal(pair.server.readyState, WebSocket.OPEN, 'the client accepted every frame');
  });

  test('stays in order behind a message the sender is still compressing (falls back to ws.send)', async () => {
    const pair = await connectPair({ threshold: 0 });
    const big = JSON.stringify({ filler: 'abc'.repeat(100_000) });
    pair.server.send(big);
    const sender = (pair.server as unknown as { _sender: { _state: number } })._sender;
    assert.notEqual(sender._state, 0, 'the sender is busy deflating, later sends queue behind it');
    sendPreframed(pair.server, preframeText(Buffer.from('after')));
    const received = await pair.waitForMessages(2);
    assert.equal(received[0], big);
    assert.equal(received[1], 'after');
  });

  test('writes made this way count towards bufferedAmount (the slow-consumer check)', async () => {
    const pair = await connectPair();
    const rawClientSocket = (pair.client as unknown as { _socket: import('node:net').Socket })._socket;
    rawClientSocket.pause();
    const message = preframeText(Buffer.alloc(64 * 1024, 0x62));
    const count = 256; // 16 MiB, far more than the loopback socket buffers absorb
    for (let i = 0; i < count; i++) sendPreframed(pair.server, message);
    const sender = (pair.server as unknown as { _sender: { _bufferedBytes: number } })._sender;
    assert.equal(sender._bufferedBytes, 0, 'nothing waited in the ws sender: every write went to the socket');
    assert.ok(
      pair.server.bufferedAmount > 4 * 1024 * 1024,
      `bufferedAmount ${pair.server.bufferedAmount} reflects the unread frames`,
    );
    rawClientSocket.resume();
    const received = await pair.waitForMessages(count, 30_000);
    assert.ok(received.every((text) => text.length === 64 * 1024 && text[0] === 'b'));
    assert.equal(pair.server.bufferedAmount, 0);
  });
});

describe('preframeString and sendParts', () => {
  /** Lengths on both sides of the RFC 6455 §5.2 length encodings, in UTF-8 bytes, with multi-byte characters. */
  const texts = ['{"a":1}', `"${'é'.repeat(62)}"`, `"${'ü'.repeat(32_766)}"`, `"${'😀'.repeat(16_400)}"`];

  test('a string is framed straight into one buffer: header, then its UTF-8 bytes', () => {
    for (const text of texts) {
      const message = preframeString(text);
      const bytes = Buffer.from(text);
      assert.ok(message.payload.equals(bytes));
      const frame = message.frame!;
      const header = bytes.length < 126 ? 2 : bytes.length < 65_536 ? 4 : 10;
      assert.equal(frame.length, header + bytes.length);
      assert.ok(frame.equals(preframeText(bytes).frame!), 'the same frame as ws builds');
    }
  });

  test("parts go out as one text message, lines joined by a single newline, received intact by ws's client", async () => {
    const pair = await connectPair();
    sendParts(pair.server, texts, false);
    sendParts(pair.server, [Buffer.from(texts[0]!), texts[1]!, Buffer.from(texts[3]!)], false);
    sendParts(pair.server, [texts[2]!], false);
    const received = await pair.waitForMessages(3);
    assert.deepEqual(received, [texts.join('\n'), [texts[0], texts[1], texts[3]].join('\n'), texts[2]]);
  });

  test('stays in order behind a message the sender is still compressing (falls back to ws.send)', async () => {
    const pair = await connectPair({ threshold: 0 });
    const big = JSON.stringify({ filler: 'abc'.repeat(100_000) });
    pair.server.send(big);
    sendParts(pair.server, ['{"n":1}', Buffer.from('{"n":2}')], false);
    sendParts(pair.server, ['{"n":3}'], false);
    const received = await pair.waitForMessages(3);
    assert.deepEqual(received, [big, '{"n":1}\n{"n":2}', '{"n":3}']);
  });
});
