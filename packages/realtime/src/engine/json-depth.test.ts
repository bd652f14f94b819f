import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { Centrifuge as CentrifugeProtobuf } from 'centrifuge/build/protobuf';
import WebSocket from 'ws';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '../protocol/json-depth.ts';
import {
  closedAfterAll,
  connectionToken,
  connectRawClient,
  RawClient,
  SECRET,
  startTestServer,
  type TestServer,
  waitForEvent,
} from '../testing/harness.ts';
import { signHmacJwt } from '../tokens/jwt.ts';

/**
 * docs/protocol.md "JSON nesting": a command whose JSON nests deeper than 64 levels (its own two levels not
 * counted) is answered 400 "json too deep" before anything reads its data — never 100 (a stack overflow in a
 * serialiser) — and the connection goes on. JSON and Protobuf.
 */

const cleanups = closedAfterAll();

/** JSON text nesting arrays `depth` levels deep, built as text (serialising such a value would itself overflow). */
const base64url = (text: string) => Buffer.from(text).toString('base64url');

/** A token over the payload text as given (a value this deep could not be serialised to sign it). */
const hs256 = (payload: string): string => {
  const input = `${base64url('{"alg":"HS256"}')}.${base64url(payload)}`;
  return `${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`;
};

const nested = (depth: number): string => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

async function startServer(): Promise<TestServer> {
  const server = await startTestServer({
    namespaces: [{ name: 'chat', allow_publish_for_client: true }],
    // The application's hooks must never see the data either.
    hooks: {
      onRpc: ({ data }) => ({ echoed: JSON.stringify(data).length }),
      onPublish: ({ data }) => ({ data: { length: JSON.stringify(data).length } }),
    },
  });
  cleanups.push(() => server.close());
  return server;
}

async function connect(server: TestServer, user: string): Promise<RawClient> {
  const raw = await connectRawClient(server.wsUrl, connectionToken(user));
  cleanups.push(() => raw.close());
  return raw;
}

describe('JSON nesting of client commands', () => {
  test('the depth scanner counts arrays and objects, not brackets inside strings', () => {
    assert.equal(exceedsJsonDepth(nested(MAX_JSON_DEPTH)), false);
    assert.equal(exceedsJsonDepth(nested(MAX_JSON_DEPTH + 1)), true);
    assert.equal(exceedsJsonDepth(`${'{"a":'.repeat(65)}1${'}'.repeat(65)}`), true);
    assert.equal(exceedsJsonDepth(`${'[{"a":'.repeat(32)}1${'}]'.repeat(32)}`), false, '64 levels in all');
    assert.equal(exceedsJsonDepth(JSON.stringify({ s: '['.repeat(500), t: '\\"[[[['.repeat(100) })), false);
    assert.equal(
      exceedsJsonDepth(`["\\\\",${nested(65)}]`),
      true,
      'an escaped backslash ends before the quote',
    );
    const brackets = '['.repeat(100);
    assert.equal(
      exceedsJsonDepth(`{"s":"\\"${brackets}"}`),
      false,
      'an escaped quote does not end the string',
    );
    assert.equal(
      exceedsJsonDepth(`{"s":"\\\\\\"x\\\\",${brackets}`),
      true,
      'after a run of backslashes, a real quote',
    );
    assert.equal(
      exceedsJsonDepth(`{"s":"${brackets}`),
      false,
      'an unterminated string is left to the parser',
    );
    // Siblings do not add up: 1,000 arrays side by side are one level.
    assert.equal(exceedsJsonDepth(`[${Array(1000).fill('[]').join(',')}]`), false);
  });

  test('publish and rpc: 64 levels of data pass, 65 / 4,000 / 30,000 are refused with 400, and the connection goes on', async () => {
    const server = await startServer();
    const raw = await connect(server, 'deep');
    let id = 10;
    const command = (method: 'publish' | 'rpc', data: string): number => {
      id += 1;
      const request =
        method === 'publish' ? `{"channel":"chat:1","data":${data}}` : `{"method":"m","data":${data}}`;
      raw.ws.send(`{"id":${id},"${method}":${request}}`);
      return id;
    };
    for (const method of ['publish', 'rpc'] as const) {
      const ok = await raw.waitForReply(command(method, nested(MAX_JSON_DEPTH)));
      assert.equal(ok.error, undefined, `${method} 64: ${JSON.stringify(ok)}`);
      for (const depth of [MAX_JSON_DEPTH + 1, 4_000, 30_000]) {
        const reply = await raw.waitForReply(command(method, nested(depth)));
        assert.deepEqual(reply.error, { code: 400, message: 'json too deep' }, `${method} ${depth}`);
      }
    }
    // Deep nesting in another field of the command is refused the same way.
    raw.ws.send(`{"id":99,"history":{"channel":"chat:1","since":${nested(5_000)}}}`);
    assert.deepEqual((await raw.waitForReply(99)).error, { code: 400, message: 'json too deep' });
    assert.equal(raw.closeCode, undefined, 'still connected');
    const after = await raw.waitForReply(command('publish', '{"fine":true}'));
    assert.equal(after.error, undefined);
  });

  test('a connect whose data nests too deeply is refused with 400, not 100', async () => {
    const server = await startServer();
    const raw = new RawClient(server.wsUrl);
    cleanups.push(() => raw.close());
    await raw.opened;
    raw.ws.send(`{"id":1,"connect":{"token":"${connectionToken('u')}","data":${nested(20_000)}}}`);
    assert.deepEqual((await raw.waitForReply(1)).error, { code: 400, message: 'json too deep' });
  });

  test('a connection token whose claims nest too deeply is an invalid token (3500), not an internal error', async () => {
    const server = await startServer();
    const b64info = Buffer.from(nested(10_000)).toString('base64');
    for (const token of [
      signHmacJwt({ sub: 'u', exp: Math.floor(Date.now() / 1000) + 60, b64info }, SECRET),
      // The payload itself, as text: `info` nested 10,000 levels, signed.
      hs256(`{"sub":"u","info":${nested(10_000)}}`),
    ]) {
      const raw = new RawClient(server.wsUrl);
      cleanups.push(() => raw.close());
      await raw.opened;
      raw.ws.send(`{"id":1,"connect":{"token":"${token}"}}`);
      assert.equal(await raw.waitForClose(), 3500);
    }
  });

  test('Protobuf: publish data that nests too deeply is refused with 400 through the official client', async () => {
    const server = await startServer();
    const client = new CentrifugeProtobuf(server.wsUrl, {
      websocket: WebSocket,
      token: connectionToken('proto'),
      timeout: 5_000,
    });
    cleanups.push(() => client.disconnect());
    client.connect();
    await waitForEvent(client, 'connected');
    const bytes = (text: string) => new TextEncoder().encode(text);
    await client.publish('chat:1', bytes(nested(MAX_JSON_DEPTH)));
    for (const depth of [MAX_JSON_DEPTH + 1, 20_000]) {
      await assert.rejects(client.publish('chat:1', bytes(nested(depth))), (error: { code: number }) => {
        assert.equal(error.code, 400, `depth ${depth}`);
        return true;
      });
    }
    assert.equal(client.state, 'connected');
  });
});
