import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Centrifuge as CentrifugeProtobuf } from 'centrifuge/build/protobuf';
import WebSocket from 'ws';
import { closedAfterAll, connectionToken, startTestServer, waitForEvent } from '../testing/harness.ts';

/**
 * Protobuf clients send `data` as bytes; bytes that are not UTF-8 JSON are refused with 107, since publications are
 * shared with JSON subscribers, which can only embed JSON (docs/protocol.md "Protobuf").
 */

const cleanups = closedAfterAll();
test('a Protobuf publish whose data is not JSON is refused with 107 (bad request)', async () => {
  const server = await startTestServer({ namespaces: [{ name: 'room', allow_publish_for_client: true }] });
  cleanups.push(() => server.close());
  const client = new CentrifugeProtobuf(server.wsUrl, { websocket: WebSocket, token: connectionToken('pb') });
  cleanups.push(() => client.disconnect());
  client.connect();
  await waitForEvent(client, 'connected');
  const error = await client.publish('room:x', new Uint8Array([0xff, 0xfe, 0x00])).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.equal((error as { code?: number } | undefined)?.code, 107);
});
