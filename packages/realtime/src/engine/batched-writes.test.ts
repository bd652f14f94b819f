import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Centrifuge, type Options, type PublicationContext } from 'centrifuge';
import { Centrifuge as CentrifugeProtobuf } from 'centrifuge/build/protobuf';
import WebSocket from 'ws';
import {
  connectionToken,
  connectRawClient,
  type RawClient,
  startTestServer,
  subscriptionToken,
  type TestServer,
  waitFor,
  waitForEvent,
} from '../testing/harness.ts';

/**
 * What the engine produces for one connection in one event-loop turn goes out in at most two WebSocket messages
 * (docs/protocol.md "Frames" and "Protobuf"): a push shared by a channel's subscribers with nothing queued before it
 * at once, everything else joined into one message at the end of the turn — JSON lines joined by `\n`,
 * length-delimited Protobuf messages one after another. The official `centrifuge` client (both builds) must split
 * such a message back into its replies and pushes, in order.
 */

let server: TestServer;
const clients: Centrifuge[] = [];
const rawClients: RawClient[] = [];

before(async () => {
  server = await startTestServer({ namespaces: [{ name: 'room' }] });
});

after(async () => {
  for (const client of clients) client.disconnect();
  for (const raw of rawClients) raw.close();
  await server.close();
});

/** A `ws` client class that counts the WebSocket messages it receives, as the `centrifuge` client's transport. */
function countingWebSocket(received: Array<Buffer | string>): typeof WebSocket {
  return class CountingWebSocket extends WebSocket {
    constructor(...args: ConstructorParameters<typeof WebSocket>) {
      super(...args);
      this.on('message', (data: Buffer, isBinary: boolean) => {
        received.push(isBinary ? Buffer.from(data) : data.toString('utf8'));
      });
    }
  } as typeof WebSocket;
}

for (const format of ['json', 'protobuf'] as const) {
  describe(`several pushes of one turn, ${format}`, () => {
    test('arrive in order in at most two WebSocket messages, and the official client decodes every one', async () => {
      const messages: Array<Buffer | string> = [];
      const Client = (format === 'protobuf' ? CentrifugeProtobuf : Centrifuge) as typeof Centrifuge;
      const user = `batch-${format}`;
      const channel = `room:batch-${format}`;
      const options: Partial<Options> = {
        token: connectionToken(user),
        timeout: 5_000,
        websocket: countingWebSocket(messages),
      };
      const client = new Client(server.wsUrl, options);
      clients.push(client);
      const sub = client.newSubscription(channel, { token: subscriptionToken(user, channel) });
      const publications: unknown[] = [];
      sub.on('publication', (ctx: PublicationContext) => {
        publications.push(
          format === 'protobuf' ? JSON.parse(new TextDecoder().decode(ctx.data as Uint8Array)) : ctx.data,
        );
      });
      const subscribed = waitForEvent(sub, 'subscribed');
      client.connect();
      sub.subscribe();
      await subscribed;
      const before = messages.length;

      // Five server-side publications started in one turn: the broker delivers them before the turn ends.
      const count = 5;
      await Promise.all(
        Array.from({ length: count }, (_, i) => server.engine.publish({ channel, data: { n: i } })),
      );
      await waitFor('every publication to reach the client', () => publications.length === count);

      assert.deepEqual(
        publications,
        Array.from({ length: count }, (_, i) => ({ n: i })),
        'decoded in the order published',
      );
      const arrived = messages.slice(before);
      assert.ok(
        arrived.length <= 2,
        `${count} pushes of one turn came in ${arrived.length} WebSocket messages: the first alone, the rest together`,
      );
      if (format === 'json') {
        // Lines joined by a single newline, never a blank line.
        const lines = (arrived as string[]).flatMap((message) => message.split('\n'));
        assert.equal(lines.length, count);
        assert.deepEqual(
          lines.map((line) => (JSON.parse(line) as { push: { pub: { data: unknown } } }).push.pub.data),
          publications,
        );
      } else {
        // Length-delimited: a varint byte count before each message, the counts adding up to the whole message.
        let pushes = 0;
        for (const message of arrived as Buffer[]) {
          let offset = 0;
          while (offset < message.length) {
            let length = 0;
            let shift = 0;
            let byte: number;
            do {
              byte = message[offset++]!;
              length |= (byte & 0x7f) << shift;
              shift += 7;
            } while (byte & 0x80);
            offset += length;
            pushes++;
          }
          assert.equal(offset, message.length, 'the varint lengths frame the message exactly');
        }
        assert.equal(pushes, count);
      }
    });
  });
}

describe('a publication with nothing queued for the connection', () => {
  test('is written to the socket before the publish call returns, not at the end of the turn', async () => {
    const channel = 'room:at-once';
    const user = 'at-once';
    const sockets: Socket[] = [];
    const onConnection = (socket: Socket) => sockets.push(socket);
    server.server.on('connection', onConnection);
    const raw = await connectRawClient(server.wsUrl, connectionToken(user));
    rawClients.push(raw);
    server.server.off('connection', onConnection);
    raw.send({ id: 2, subscribe: { channel, token: subscriptionToken(user, channel) } });
    await raw.waitForReply(2);
    assert.equal(sockets.length, 1, 'the server side of this one client');
    const socket = sockets[0]!;
    const writtenBefore = socket.bytesWritten;

    // The memory broker hands the publication to the hub before `publish` resolves; this continuation runs in the
    // same turn, before any `setImmediate`, so a queued push would not have reached the socket yet.
    await server.engine.publish({ channel, data: { n: 1 } });
    const writtenInTurn = socket.bytesWritten - writtenBefore;

    assert.ok(writtenInTurn > 0, 'the push was written in the turn of its publication');
    const push = await raw.waitForMessage((m) => m.push !== undefined);
    assert.deepEqual((push.push as { pub: { data: unknown } }).pub.data, { n: 1 });
    // 2 bytes of WebSocket header (a payload under 126 bytes, unmasked from the server) and the JSON line.
    assert.equal(writtenInTurn, 2 + Buffer.byteLength(raw.frames.at(-1)!));
  });
});
