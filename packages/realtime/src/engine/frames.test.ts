import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  connectionToken,
  RawClient,
  sleep,
  startTestServer,
  subscriptionToken,
  type TestServer,
  waitFor,
} from '../testing/harness.ts';

/** Frame-level behaviour with a raw `ws` client: framing, ordering, protocol violations, ping/pong, stale. */

let server: TestServer;
const raws: RawClient[] = [];

before(async () => {
  server = await startTestServer({
    namespaces: [{ name: 'chat', history_size: 10, history_ttl: '1h', force_recovery: true }],
    maxFrameBytes: 4096,
    staleCloseDelayMs: 1500,
    pingIntervalMs: 1000,
    pongTimeoutMs: 800,
    timerResolutionMs: 20,
  });
});

after(async () => {
  for (const raw of raws) raw.close();
  await server.close();
});

async function connectSocket(): Promise<RawClient> {
  const raw = new RawClient(server.wsUrl);
  raws.push(raw);
  await raw.opened;
  return raw;
}

function assertNoBlankLines(raw: RawClient): void {
  for (const frame of raw.frames) {
    for (const line of frame.split('\n'))
      assert.notEqual(line.trim(), '', `blank line in frame ${JSON.stringify(frame)}`);
  }
}

describe('framing', () => {
  test('connect and subscribe in one frame are answered in order with no blank lines', async () => {
    const raw = await connectSocket();
    raw.send(
      { id: 1, connect: { token: connectionToken('u1'), name: 'test' } },
      { id: 2, subscribe: { channel: 'chat:a', token: subscriptionToken('u1', 'chat:a'), flag: 1 } },
    );
    const connect = await raw.waitForReply(1);
    const subscribe = await raw.waitForReply(2);
    const result = connect.connect as Record<string, unknown>;
    assert.equal(result.ping, 1);
    assert.equal(result.pong, true);
    assert.equal(typeof result.client, 'string');
    assert.equal(result.expires, true);
    assert.ok((result.ttl as number) > 3500);
    const sub = subscribe.subscribe as Record<string, unknown>;
    assert.equal(sub.recoverable, true);
    assert.equal(sub.positioned, true);
    assert.equal(typeof sub.epoch, 'string');
    assert.equal('offset' in sub, false, 'zero offset is omitted');
    assert.ok(raw.messages.indexOf(connect) < raw.messages.indexOf(subscribe));
    await server.engine.publish({ channel: 'chat:a', data: { text: 'line\nbreak' } });
    const push = await raw.waitForMessage((m) => m.push !== undefined);
    assert.deepEqual(push, {
      push: { channel: 'chat:a', pub: { data: { text: 'line\nbreak' }, offset: 1 } },
    });
    assertNoBlankLines(raw);
  });

  test('replies produced in the same turn go out in one frame', async () => {
    const raw = await connectSocket();
    raw.send({ id: 1, connect: { token: connectionToken('u1b') } });
    await raw.waitForReply(1);
    const before = raw.frames.length;
    raw.send(
      { id: 2, unsubscribe: { channel: 'chat:x' } },
      { id: 3, unsubscribe: { channel: 'chat:y' } },
      { id: 4, unsubscribe: { channel: 'chat:z' } },
    );
    await raw.waitForReply(4);
    assert.deepEqual(raw.frames.slice(before), [
      '{"id":2,"unsubscribe":{}}\n{"id":3,"unsubscribe":{}}\n{"id":4,"unsubscribe":{}}',
    ]);
  });

  test('raw JSON data is embedded, not base64, and publisher info is always written', async () => {
    const raw = await connectSocket();
    raw.send({ id: 1, connect: { token: connectionToken('u2', { info: { name: 'Ann' } }) } });
    await raw.waitForReply(1);
    raw.send({ id: 2, subscribe: { channel: 'chat:info', token: subscriptionToken('u2', 'chat:info') } });
    await raw.waitForReply(2);
    await server.engine.publish({
      channel: 'chat:info',
      data: [1, 'two', { three: 3 }],
      info: { user: '', client: 'c' },
    });
    const push = await raw.waitForMessage((m) => m.push !== undefined);
    assert.deepEqual((push.push as { pub: unknown }).pub, {
      data: [1, 'two', { three: 3 }],
      info: { user: '', client: 'c' },
      offset: 1,
    });
  });
});

describe('protocol violations', () => {
  test('malformed JSON closes with 3501', async () => {
    const raw = await connectSocket();
    raw.ws.send('{"id":1,"connect":');
    assert.equal(await raw.waitForClose(), 3501);
  });

  test('a command before connect closes with 3501', async () => {
    const raw = await connectSocket();
    raw.send({ id: 1, subscribe: { channel: 'chat:a' } });
    assert.equal(await raw.waitForClose(), 3501);
  });

  test('an unknown command closes with 3501', async () => {
    const raw = await connectSocket();
    raw.send({ id: 1, connect: { token: connectionToken('u3') } });
    await raw.waitForReply(1);
    raw.send({ id: 2, teleport: { to: 'mars' } });
    assert.equal(await raw.waitForClose(), 3501);
  });

  test('a second connect closes with 3501', async () => {
    const raw = await connectSocket();
    raw.send(
      { id: 1, connect: { token: connectionToken('u4') } },
      { id: 2, connect: { token: connectionToken('u4') } },
    );
    await raw.waitForReply(1);
    assert.equal(await raw.waitForClose(), 3501);
  });

  test('a frame over the size limit closes with 1009', async () => {
    const raw = await connectSocket();
    raw.send({ id: 1, connect: { token: connectionToken('u5'), data: 'x'.repeat(5000) } });
    assert.equal(await raw.waitForClose(), 1009);
  });

  test('an expired connect token is answered with error 109 and the socket stays open for the client to close', async () => {
    const raw = await connectSocket();
    raw.send(
      { id: 1, connect: { token: connectionToken('u6', {}, -5) } },
      { id: 2, subscribe: { channel: 'chat:a' } },
    );
    const reply = await raw.waitForReply(1);
    assert.deepEqual(reply, { id: 1, error: { code: 109, message: 'token expired' } });
    // Bounded absence check: nothing more happening is no event; 100 ms, well short of the stale close (1.5 s).
    await sleep(100);
    assert.equal(raw.closeCode, undefined);
    assert.equal(raw.messages.length, 1, 'the rest of the frame is skipped');
  });

  test('a connection that never sends connect is closed as stale (3502)', async () => {
    const raw = await connectSocket();
    assert.equal(await raw.waitForClose(6000), 3502);
  });
});

describe('ping and pong', () => {
  test('the server pings with {} and closes with 3012 when no pong comes back', async () => {
    const raw = await connectSocket();
    raw.send({ id: 1, connect: { token: connectionToken('p1') } });
    await raw.waitForReply(1);
    await raw.waitForMessage((m) => Object.keys(m).length === 0, 3000);
    assert.equal(await raw.waitForClose(6000), 3012);
  });

  test('answering pings keeps the connection, and an unexpected pong is tolerated', async () => {
    const raw = await connectSocket();
    raw.ws.on('message', (data) => {
      if (data.toString() === '{}') raw.ws.send('{}');
    });
    raw.send({ id: 1, connect: { token: connectionToken('p2') } });
    await raw.waitForReply(1);
    raw.ws.send('{}');
    // Each ping comes a ping interval (1 s) after the one before, past that one's pong time-out (0.8 s): the third
    // ping shows that two answered pings did not close the connection.
    await waitFor('the third ping', () => raw.frames.filter((f) => f === '{}').length >= 3, 10_000);
    assert.equal(raw.closeCode, undefined);
  });
});
