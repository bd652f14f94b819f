import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { createLogger } from '../../logging/logger.ts';
import { testRedisUrl } from '../../testing/databases.ts';
import { waitForSettled } from '../../testing/wait.ts';
import { RedisReplySignals, type ReplySignal } from './reply-signals.ts';

// Two "nodes" (two RedisReplySignals on their own connections) sharing one prefix, as a cluster's nodes do.
describe('reply signals between nodes (Redis)', () => {
  const prefix = `parley-test:${randomBytes(5).toString('hex')}:`;
  const connections: Redis[] = [];
  const nodes: RedisReplySignals[] = [];
  const node = () => {
    const redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: 1 });
    redis.on('error', () => {});
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
    const a = node();
    const b = node();
    const heardByA: ReplySignal[] = [];
    const heardByB: ReplySignal[] = [];
    await a.listen((signal) => heardByA.push(signal));
    await b.listen((signal) => heardByB.push(signal));
    const conversationId = randomUUID();
    await a.send({ kind: 'interrupt', conversationId, reason: 'closed' });
    await a.send({ kind: 'wake', conversationId });
    for (let i = 0; i < 100 && heardByB.length < 2; i++) await sleep(10);
    assert.deepEqual(heardByB, [
      { kind: 'interrupt', conversationId, reason: 'closed' },
      { kind: 'wake', conversationId },
    ]);
    assert.equal(heardByA.length, 0);
  });

  it('ignores messages that are not signals', async () => {
    const a = node();
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
    await sleep(50);
    assert.deepEqual(heard, []);
  });

  it('a signal sent while Redis is unreachable is dropped with a warning, never an error', async () => {
    const down = new Redis('redis://127.0.0.1:1', {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      lazyConnect: true,
    });
    down.on('error', () => {});
    const signals = new RedisReplySignals(down, { prefix, logger: createLogger('silent') });
    await waitForSettled(
      signals.send({ kind: 'wake', conversationId: randomUUID() }),
      5_000,
      'send to fail softly',
    );
    down.disconnect();
  });
});
