import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { testRedisUrl } from '@parley/testing/databases';
import { waitFor, waitForSettled } from '@parley/testing/wait';
import type { Redis } from 'ioredis';
import { createLogger } from '../../logging/logger.ts';
import { connectFailFastRedis } from '../../storage/redis-client.ts';
import { RedisReplySignals, type ReplySignal } from './reply-signals.ts';

// Two "nodes" (two RedisReplySignals on their own connections) sharing one prefix, as a cluster's nodes do.
describe('reply signals between nodes (Redis)', () => {
  const prefix = `parley-test:${randomBytes(5).toString('hex')}:`;
  const connections: Redis[] = [];
  const nodes: RedisReplySignals[] = [];
  const node = async () => {
    // The server's one factory of Redis connections (storage/redis-client.ts), as webchat.ts uses it.
    const { redis, ready } = connectFailFastRedis(testRedisUrl());
    await ready;
    connections.push(redis);
    const signals = new RedisReplySignals(redis, { prefix, logger: createLogger('silent') });
    nodes.push(signals);
    return signals;
  };
  after(async () => {
    for (const signals of nodes) await signals.close();
    for (const redis of connections) redis.disconnect();
  });

  it('delivers interrupts and wake-ups to the other nodes, not to the sender', async () => {
    const a = await node();
    const b = await node();
    const heardByA: ReplySignal[] = [];
    const heardByB: ReplySignal[] = [];
    await a.listen((signal) => heardByA.push(signal));
    await b.listen((signal) => heardByB.push(signal));
    const conversationId = randomUUID();
    await a.send({ kind: 'interrupt', conversationId, reason: 'closed' });
    await a.send({ kind: 'wake', conversationId });
    await waitFor('B to hear both signals', () => heardByB.length >= 2, 5_000);
    assert.deepEqual(heardByB, [
      { kind: 'interrupt', conversationId, reason: 'closed' },
      { kind: 'wake', conversationId },
    ]);
    // A hears B's signal after anything published before it on the channel (Redis keeps a channel's order for each
    // subscriber): once it has, A would have heard its own two as well.
    const fromB = randomUUID();
    await b.send({ kind: 'wake', conversationId: fromB });
    await waitFor("A to hear B's signal", () => heardByA.length > 0, 5_000);
    assert.deepEqual(heardByA, [{ kind: 'wake', conversationId: fromB }]);
  });

  it('ignores messages that are not signals', async () => {
    const a = await node();
    const heard: ReplySignal[] = [];
    await a.listen((signal) => heard.push(signal));
    const raw = connections.at(-1)!;
    for (const junk of [
      '{',
      '{"node":"x","kind":"interrupt","conversation_id":"c","reason":"reboot"}',
      '42',
    ]) {
      await raw.publish(`${prefix}reply-signals`, junk);
    }
    // A real signal after the junk arrives after it (one channel, in order): then the junk has been seen.
    const conversationId = randomUUID();
    await (await node()).send({ kind: 'wake', conversationId });
    await waitFor('the real signal', () => heard.length > 0, 5_000);
    assert.deepEqual(heard, [{ kind: 'wake', conversationId }]);
  });

  it('a signal sent while Redis is unreachable is dropped with a warning, never an error', async () => {
    const { redis: down, ready } = connectFailFastRedis('redis://127.0.0.1:1');
    await ready;
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    const signals = new RedisReplySignals(down, { prefix, logger });
    try {
      await waitForSettled(
        signals.send({ kind: 'wake', conversationId: randomUUID() }),
        5_000,
        'send to fail softly',
      );
    } finally {
      down.disconnect();
    }
    const logged = lines.map((line) => JSON.parse(line));
    assert.equal(logged.length, 1, lines.join('\n'));
    assert.equal(logged[0].level, 40, 'a warning');
    assert.equal(
      logged[0].msg,
      'could not signal the other nodes (Redis); they will notice on their next sweep',
    );
    assert.equal(logged[0].signal, 'wake');
  });
  it('hears signals again after its connection dropped and came back (subscribes on every ready)', async () => {
    const a = await node();
    const b = await node();
    const heard: ReplySignal[] = [];
    await b.listen((signal) => heard.push(signal));
    // biome-ignore lint/complexity/useLiteralKeys: the private connection, dropped as a network failure would
    const subscriber = b['channel']['subscriber']!;
    const back = new Promise((resolve) => subscriber.once('ready', resolve));
    subscriber.disconnect(true);
    await back;
    const conversationId = randomUUID();
    await waitFor(
      'B to hear a signal sent after it reconnected',
      async () => {
        await a.send({ kind: 'wake', conversationId });
        return heard.length > 0;
      },
      5_000,
      100,
    );
    assert.equal(heard[0]!.conversationId, conversationId);
  });
});
