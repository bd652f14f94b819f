import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import protobuf from 'protobufjs';
import type { ClientHandle } from '../engine/hooks.ts';
import {
  connectionToken,
  connectRawClient,
  type RawClient,
  startTestServer,
  subscriptionToken,
  type TestServer,
  waitFor,
} from '../testing/harness.ts';
import { JSON_ALWAYS_WRITTEN } from './json-always.ts';
import { jsonReplyToProtobuf } from './protobuf.ts';
import { protocolType } from './schema.ts';

/**
 * Every reply and push type the engine writes, produced by a real engine over a real WebSocket and checked field by
 * field against the protocol schema (src/protocol/client.proto): each field is one the message declares, with the
 * JSON kind of its type; zero values are left out except the fields Centrifugo always writes
 * (src/protocol/json-always.ts), which must be there. Each frame also survives the Protobuf conversion unchanged.
 */

const CHANNEL = 'room:schema';
let server: TestServer;
let handle: ClientHandle | undefined;
const raws: RawClient[] = [];

before(async () => {
  server = await startTestServer({
    namespaces: [
      {
        name: 'room',
        history_size: 10,
        history_ttl: '60s',
        force_recovery: true,
        presence: true,
        join_leave: true,
        force_push_join_leave: true,
        allow_publish_for_subscriber: true,
        allow_history_for_client: true,
        allow_presence_for_client: true,
      },
    ],
    hooks: {
      onConnect: (client) => {
        if (client.user === 'alice') handle = client;
      },
      onRpc: ({ data }) => ({ echoed: data }),
    },
  });
});

after(async () => {
  for (const raw of raws) raw.close();
  await server.close();
});

type Json = Record<string, unknown>;

const INTEGER_TYPES = new Set(['uint32', 'int32', 'uint64', 'int64', 'sint64']);

function isZero(value: unknown): boolean {
  if (value === 0 || value === false || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return value !== null && typeof value === 'object' && Object.keys(value).length === 0;
}

/** Problems of `value` as a JSON `type` message, with their paths; empty when it matches the schema. */
function schemaProblems(type: protobuf.Type, value: unknown, path: string): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [`${path}: not an object`];
  const problems: string[] = [];
  const always = JSON_ALWAYS_WRITTEN[type.name] ?? [];
  for (const name of always) if (!(name in value)) problems.push(`${path}.${name}: always written, missing`);
  for (const [key, item] of Object.entries(value as Json)) {
    const field = type.fields[key];
    const at = `${path}.${key}`;
    if (field === undefined) {
      problems.push(`${at}: not a field of ${type.name}`);
      continue;
    }
    if (field.type !== 'bytes' && isZero(item) && !always.includes(key) && !field.resolvedType) {
      problems.push(`${at}: zero value written`);
    }
    problems.push(...fieldProblems(field, item, at));
  }
  return problems;
}

function fieldProblems(field: protobuf.Field, value: unknown, at: string): string[] {
  const one = (item: unknown, where: string): string[] => {
    if (field.type === 'bytes') return item === undefined ? [`${where}: bytes without a JSON value`] : [];
    if (field.resolvedType instanceof protobuf.Type) return schemaProblems(field.resolvedType, item, where);
    if (field.type === 'string') return typeof item === 'string' ? [] : [`${where}: not a string`];
    if (field.type === 'bool') return typeof item === 'boolean' ? [] : [`${where}: not a boolean`];
    if (INTEGER_TYPES.has(field.type)) return Number.isInteger(item) ? [] : [`${where}: not an integer`];
    return [`${where}: unexpected type ${field.type}`];
  };
  if (field instanceof protobuf.MapField) {
    if (value === null || typeof value !== 'object') return [`${at}: map is not an object`];
    return Object.entries(value as Json).flatMap(([k, v]) => one(v, `${at}[${k}]`));
  }
  if (field.repeated) {
    return Array.isArray(value) ? value.flatMap((v, i) => one(v, `${at}[${i}]`)) : [`${at}: not a list`];
  }
  return one(value, at);
}

/** Drops zero values at any depth: Protobuf cannot tell an always-written zero from an absent field. */
function withoutZeros(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutZeros);
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value as Json)) {
    // Empty result objects (`publish: {}`) are replies in both formats and stay.
    const emptyObject = v !== null && typeof v === 'object' && !Array.isArray(v);
    if (isZero(v) && !emptyObject) continue;
    out[k] = withoutZeros(v);
  }
  return out;
}

/** A Protobuf `Reply` back in JSON shape (bytes parsed as the JSON they hold). */
function protobufToJsonShape(type: protobuf.Type, message: Json): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(message)) {
    const field = type.fields[key]!;
    const one = (item: unknown): unknown => {
      if (field.type === 'bytes') return JSON.parse(Buffer.from(item as Uint8Array).toString('utf8'));
      if (field.resolvedType instanceof protobuf.Type)
        return protobufToJsonShape(field.resolvedType, item as Json);
      return item;
    };
    if (field instanceof protobuf.MapField) {
      out[key] = Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, one(v)]));
    } else if (field.repeated) out[key] = (value as unknown[]).map(one);
    else out[key] = one(value);
  }
  return out;
}

/** Which reply or push a frame is, e.g. `reply:presence_stats`, `push:join`, `ping`. */
function kindOf(message: Json): string {
  if ('error' in message) return 'reply:error';
  if ('push' in message) {
    const push = message.push as Json;
    return `push:${Object.keys(push).find((k) => k !== 'channel')}`;
  }
  const method = Object.keys(message).find((k) => k !== 'id');
  return method === undefined ? 'ping' : `reply:${method}`;
}

/** The disconnect push exists on emulation transports only: an HTTP-streaming connection closed by the server. */
async function disconnectPushOverHttpStream(): Promise<Json> {
  const response = await fetch(server.httpStreamUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ id: 1, connect: { token: connectionToken('dave') } }),
  });
  const reader = response.body!.getReader();
  let text = '';
  await reader.read().then(({ value }) => {
    text += Buffer.from(value ?? new Uint8Array()).toString();
  });
  await server.engine.disconnectUser('dave', { code: 4001, reason: 'bye' });
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += Buffer.from(value).toString();
  }
  const lines = text.split('\n').filter((l) => l !== '');
  return JSON.parse(lines.at(-1)!) as Json;
}

async function collectFrames(): Promise<Json[]> {
  const alice = await connectRawClient(server.wsUrl, connectionToken('alice', {}, 600));
  raws.push(alice);
  alice.send({ id: 2, presence_stats: { channel: CHANNEL } }, { id: 3, history: { channel: CHANNEL } });
  await alice.waitForReply(3);
  alice.send({ id: 4, subscribe: { channel: CHANNEL, token: subscriptionToken('alice', CHANNEL, {}, 600) } });
  await alice.waitForReply(4);
  alice.send({ id: 5, publish: { channel: CHANNEL, data: { text: 'hi' } } });
  await alice.waitForReply(5);
  alice.send(
    { id: 6, presence: { channel: CHANNEL } },
    { id: 7, presence_stats: { channel: CHANNEL } },
    { id: 8, history: { channel: CHANNEL, limit: 10 } },
    { id: 9, rpc: { method: 'echo', data: { n: 1 } } },
    { id: 10, refresh: { token: connectionToken('alice', {}, 600) } },
    { id: 11, sub_refresh: { channel: CHANNEL, token: subscriptionToken('alice', CHANNEL, {}, 600) } },
    { id: 12, subscribe: { channel: 'nowhere:x' } },
  );
  await alice.waitForReply(12);
  const bob = await connectRawClient(server.wsUrl, connectionToken('bob'));
  raws.push(bob);
  bob.send({ id: 2, subscribe: { channel: CHANNEL, token: subscriptionToken('bob', CHANNEL) } });
  await bob.waitForReply(2);
  bob.send({ id: 3, unsubscribe: { channel: CHANNEL } });
  await bob.waitForReply(3);
  await alice.waitForMessage((m) => kindOf(m) === 'push:leave');
  handle!.send({ note: 'from the server' });
  await alice.waitForMessage((m) => kindOf(m) === 'push:message');
  await server.engine.unsubscribe('alice', CHANNEL);
  await alice.waitForMessage((m) => kindOf(m) === 'push:unsubscribe');
  await server.engine.subscribeUser('alice', { channel: 'room:pushed', data: JSON.stringify({ hi: 1 }) });
  await alice.waitForMessage((m) => kindOf(m) === 'push:subscribe');
  await server.engine.refreshUser('alice', { expireAt: Math.floor(Date.now() / 1000) + 600 });
  await alice.waitForMessage((m) => kindOf(m) === 'push:refresh');
  return [...alice.messages, ...bob.messages, await disconnectPushOverHttpStream()];
}

describe('reply frames against the protocol schema', () => {
  let frames: Json[];

  before(async () => {
    frames = await collectFrames();
  });

  test('the scenario produced every reply and push type', () => {
    const kinds = new Set(frames.map(kindOf));
    for (const kind of [
      'reply:connect',
      'reply:subscribe',
      'reply:unsubscribe',
      'reply:publish',
      'reply:presence',
      'reply:presence_stats',
      'reply:history',
      'reply:rpc',
      'reply:refresh',
      'reply:sub_refresh',
      'reply:error',
      'push:pub',
      'push:join',
      'push:leave',
      'push:message',
      'push:unsubscribe',
      'push:subscribe',
      'push:refresh',
      'push:disconnect',
    ]) {
      assert.ok(kinds.has(kind), `no ${kind} frame`);
    }
  });

  test('every frame matches the schema field by field', () => {
    const reply = protocolType('Reply');
    for (const frame of frames) assert.deepEqual(schemaProblems(reply, frame, kindOf(frame)), []);
  });

  test('an empty channel: presence_stats writes zeros, history writes an empty list, epoch and offset 0', () => {
    const stats = frames.find((m) => m.id === 2 && 'presence_stats' in m)!;
    assert.deepEqual(stats.presence_stats, { num_clients: 0, num_users: 0 });
    const history = frames.find((m) => m.id === 3 && 'history' in m)!.history as Json;
    assert.deepEqual(Object.keys(history), ['publications', 'epoch', 'offset']);
    assert.deepEqual(history.publications, []);
    assert.equal(history.offset, 0);
  });

  test('every frame converts to Protobuf and back without losing a field', () => {
    const reply = protocolType('Reply');
    for (const frame of frames) {
      const bytes = jsonReplyToProtobuf(JSON.stringify(frame));
      const decoded = reply.toObject(reply.decodeDelimited(bytes), { longs: Number }) as Json;
      assert.deepEqual(withoutZeros(protobufToJsonShape(reply, decoded)), withoutZeros(frame), kindOf(frame));
    }
  });
});

describe('unsubscribe reply', () => {
  test('is an empty object, also for a channel never subscribed', async () => {
    const raw = await connectRawClient(server.wsUrl, connectionToken('carol'));
    raws.push(raw);
    raw.send({ id: 2, unsubscribe: { channel: CHANNEL } });
    const reply = await raw.waitForReply(2);
    assert.deepEqual(reply, { id: 2, unsubscribe: {} });
    assert.deepEqual(schemaProblems(protocolType('Reply'), reply, 'reply'), []);
    await waitFor('no close', () => raw.closeCode === undefined);
  });
});
