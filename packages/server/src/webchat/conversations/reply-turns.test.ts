import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { createLogger } from '../../logging/logger.ts';
import { testRedisUrl } from '../../testing/databases.ts';
import { withTimeout } from '../testing/webchat-fixtures.ts';
import { type InterruptReason, RedisReplyTurns } from './reply-turns.ts';

// Two "nodes" (two RedisReplyTurns on their own connections) sharing one prefix, as a cluster's nodes do.
describe('reply turns in Redis', () => {
  const prefix = `parley-test:${randomBytes(5).toString('hex')}:`;
  const connections: Redis[] = [];
  const nodes: RedisReplyTurns[] = [];
  const connectionOf = new Map<RedisReplyTurns, Redis>();
  const node = (turnTtlMs = 2_000, nodeTtlMs = 10_000) => {
    const redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: 1 });
    redis.on('error', () => {});
    connections.push(redis);
    const turns = new RedisReplyTurns(redis, {
      prefix,
      turnTtlMs,
      nodeTtlMs,
      pollMs: 10,
      logger: createLogger('silent'),
    });
    nodes.push(turns);
    connectionOf.set(turns, redis);
    return turns;
  };
  /** A node that dies without a word: its connection drops, its heartbeats stop, nothing is released. */
  const crash = (turns: RedisReplyTurns) => connectionOf.get(turns)!.disconnect();
  let a: RedisReplyTurns;
  let b: RedisReplyTurns;
  before(() => {
    a = node();
    b = node();
  });
  after(async () => {
    for (const turns of nodes) await turns.close();
    for (const redis of connections) redis.disconnect();
  });

  it('gives the turn in line order, one holder at a time, across nodes', async () => {
    const conversation = randomUUID();
    const events: string[] = [];
    // Message 2 is queued on node B before message 1's node A even asks: B must still wait for 1.
    await a.enqueue(conversation, 'm1', 1);
    await b.enqueue(conversation, 'm2', 2);
    const second = b
      .acquire(conversation, 'm2', new AbortController().signal)
      .then(() => events.push('m2 turn'));
    await sleep(50);
    assert.equal(events.length, 0, 'm2 waits while m1 is ahead in line');
    await a.acquire(conversation, 'm1', new AbortController().signal);
    events.push('m1 turn');
    await sleep(50);
    assert.equal(events.join(), 'm1 turn', 'm2 waits while m1 holds the turn');
    await a.release(conversation, 'm1');
    await withTimeout(second, 2_000, 'the turn of m2');
    assert.deepEqual(events, ['m1 turn', 'm2 turn']);
    await b.release(conversation, 'm2');
  });

  it('stops waiting when aborted, and leaving the line lets the next one through', async () => {
    const conversation = randomUUID();
    await a.enqueue(conversation, 'holder', 1);
    await a.acquire(conversation, 'holder', new AbortController().signal);
    await b.enqueue(conversation, 'waiter', 2);
    await b.enqueue(conversation, 'next', 3);
    const controller = new AbortController();
    const waiting = b.acquire(conversation, 'waiter', controller.signal);
    controller.abort('handover');
    await assert.rejects(waiting, (reason) => reason === 'handover');
    await b.release(conversation, 'waiter');
    await a.release(conversation, 'holder');
    // "waiter" left the line, so "next" gets the turn at once.
    await withTimeout(
      b.acquire(conversation, 'next', new AbortController().signal),
      2_000,
      'the turn of next',
    );
    await b.release(conversation, 'next');
  });

  it('a turn and a place in line left by a crashed node expire', async () => {
    const conversation = randomUUID();
    const crashed = node(300, 300);
    const survivor = node(300, 300);
    await crashed.enqueue(conversation, 'lost', 1);
    await crashed.acquire(conversation, 'lost', new AbortController().signal);
    await crashed.enqueue(conversation, 'lost-too', 2);
    crash(crashed);
    // The crashed node never releases; the survivor's message still gets its turn once both have expired.
    await survivor.enqueue(conversation, 'alive', 3);
    const started = Date.now();
    await withTimeout(
      survivor.acquire(conversation, 'alive', new AbortController().signal),
      3_000,
      'the turn',
    );
    assert.ok(Date.now() - started >= 250, 'it waited for the expiry, not less');
    await survivor.release(conversation, 'alive');
  });

  it('a live node keeps its places in line however long they wait (no overtaking by another node)', async () => {
    const conversation = randomUUID();
    // A turn may be held up to 400 ms; this node's later messages wait longer than that in all.
    const busy = node(400, 300);
    const other = node(400, 300);
    await busy.enqueue(conversation, 'm1', 1);
    await busy.enqueue(conversation, 'm2', 2);
    await busy.enqueue(conversation, 'm3', 3);
    await busy.acquire(conversation, 'm1', new AbortController().signal);
    await other.enqueue(conversation, 'm4', 4);
    const order: string[] = [];
    const fourth = other
      .acquire(conversation, 'm4', new AbortController().signal)
      .then(() => order.push('m4'));
    for (const [held, next] of [
      ['m1', 'm2'],
      ['m2', 'm3'],
    ] as const) {
      await sleep(300);
      await busy.release(conversation, held);
      await withTimeout(
        busy.acquire(conversation, next, new AbortController().signal),
        2_000,
        `the turn of ${next}`,
      );
      order.push(next);
    }
    await busy.release(conversation, 'm3');
    await withTimeout(fourth, 2_000, 'the turn of m4');
    await other.release(conversation, 'm4');
    assert.deepEqual(order, ['m2', 'm3', 'm4']);
  });

  it('tells the other nodes, not itself, to stop a conversation’s reply', async () => {
    const heardByB: Array<[string, InterruptReason]> = [];
    const heardByA: Array<[string, InterruptReason]> = [];
    await b.onInterrupt((conversationId, reason) => heardByB.push([conversationId, reason]));
    await a.onInterrupt((conversationId, reason) => heardByA.push([conversationId, reason]));
    const conversation = randomUUID();
    await a.interruptElsewhere(conversation, 'closed');
    for (let i = 0; i < 100 && heardByB.length === 0; i++) await sleep(10);
    assert.deepEqual(heardByB, [[conversation, 'closed']]);
    assert.equal(heardByA.length, 0);
  });

  it('a node that failed open on its turn still leaves the line, so the other nodes are not held up', async () => {
    const conversation = randomUUID();
    const redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: 1 });
    connections.push(redis);
    const flaky = new RedisReplyTurns(redis, { prefix, turnTtlMs: 5_000, logger: createLogger('silent') });
    await flaky.enqueue(conversation, 'm1', 1);
    // Redis fails only the script that takes the turn: the node replies in its own order.
    const scripts = redis.eval;
    redis.eval = (async () => {
      throw new Error('connection lost');
    }) as unknown as typeof redis.eval;
    await flaky.acquire(conversation, 'm1', new AbortController().signal);
    redis.eval = scripts;
    await flaky.release(conversation, 'm1');
    await b.enqueue(conversation, 'm2', 2);
    await withTimeout(
      b.acquire(conversation, 'm2', new AbortController().signal),
      1_000,
      'the turn of the next message',
    );
    await b.release(conversation, 'm2');
  });

  it('fails open when Redis is unreachable: the reply goes ahead', async () => {
    const down = new Redis('redis://127.0.0.1:1', {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      lazyConnect: true,
    });
    down.on('error', () => {});
    const turns = new RedisReplyTurns(down, { prefix, turnTtlMs: 1_000, logger: createLogger('silent') });
    const conversation = randomUUID();
    await withTimeout(
      (async () => {
        await turns.enqueue(conversation, 'm', 1);
        await turns.acquire(conversation, 'm', new AbortController().signal);
        await turns.release(conversation, 'm');
      })(),
      5_000,
      'the calls to fail open',
    );
    down.disconnect();
  });
});
