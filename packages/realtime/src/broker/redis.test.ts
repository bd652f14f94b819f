import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { runBrokerContract } from '../testing/broker-contract/broker.test-suite.ts';
import type { BrokerFactory } from '../testing/broker-contract/support.ts';
import { waitFor } from '../testing/harness.ts';
import { BrokerError } from './errors.ts';
import { RedisBroker, RedisPresenceManager } from './redis.ts';
import type { Publication } from './types.ts';

const url = process.env.PARLEY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Every key and PUB/SUB channel of this file lives under this prefix; removed when the file is done. */
const filePrefix = `parleytest-${randomUUID().slice(0, 8)}`;
const admin = new Redis(url);
let backends = 0;

after(async () => {
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${filePrefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await admin.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
  await admin.quit();
});

function newNodesSharing(prefix: string, count: number) {
  return Array.from({ length: count }, () => ({
    broker: new RedisBroker({ url, prefix }),
    presence: new RedisPresenceManager({ url, prefix }),
  }));
}

const FACTORY: BrokerFactory = {
  name: 'redis',
  synchronousDelivery: false,
  async createNodes(count) {
    // A new prefix per call = a fresh, empty backend; the nodes of one call share it like a cluster.
    backends += 1;
    return newNodesSharing(`${filePrefix}.${backends}`, count);
  },
};

runBrokerContract(FACTORY);

describe('redis: broker specifics', () => {
  const prefix = `${filePrefix}.specific`;
  const retention = { size: 10, ttlMs: 60_000, metaTtlMs: 600_000 };

  it('resubscribes every channel after the PUB/SUB connection drops', async (t) => {
    const received: Publication[] = [];
    const controls: string[] = [];
    const broker = new RedisBroker({ url, prefix });
    const publisher = new RedisBroker({ url, prefix });
    t.after(() => Promise.all([broker.close(), publisher.close()]));
    await broker.run({
      onPublication: (_channel, publication) => received.push(publication),
      onJoin() {},
      onLeave() {},
      onControl: (message) => controls.push(message),
    });
    await publisher.run({ onPublication() {}, onJoin() {}, onLeave() {}, onControl() {} });
    const channels = Array.from({ length: 700 }, (_, i) => `resub:${i}`);
    await broker.subscribe(channels);

    // Kill this node's PUB/SUB connection on the Redis side: the one holding control + 700 channels.
    const clients = (await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
    const ours = clients
      .split('\n')
      .filter((line) => /\bsub=701\b/.test(line))
      .map((line) => /\bid=(\d+)/.exec(line)?.[1]);
    assert.equal(ours.length, 1, 'exactly one connection holds the 701 subscriptions');
    await admin.client('KILL', 'ID', ours[0]!);

    // Publish until the resubscribed connection delivers both a control message and channel publications: a retry
    // at each poll, bounded (10 s), since what was published before the resubscription is lost by design.
    await waitFor(
      'a control message and publications of both batches after the resubscription',
      async () => {
        await publisher.publishControl('after');
        await publisher.publish({ channel: 'resub:0', data: '"a"', history: retention });
        await publisher.publish({ channel: 'resub:699', data: '"b"' });
        return controls.includes('after') && received.length >= 2;
      },
      10_000,
    );
    assert.ok(controls.includes('after'), 'control channel resubscribed');
    assert.ok(
      received.some((p) => p.data === '"a"' && typeof p.offset === 'number'),
      'first channel resubscribed',
    );
    assert.ok(
      received.some((p) => p.data === '"b"'),
      'channel of the second batch resubscribed',
    );
    const [, numsub] = (await admin.pubsub('NUMSUB', `${prefix}.client.resub:699`)) as [string, number];
    assert.equal(numsub, 1);
  });

  it('delivers each message once when two starts overlap', async (t) => {
    const controls: string[] = [];
    const broker = new RedisBroker({ url, prefix });
    const publisher = new RedisBroker({ url, prefix });
    t.after(() => Promise.all([broker.close(), publisher.close()]));
    const handler = {
      onPublication() {},
      onJoin() {},
      onLeave() {},
      onControl: (message: string) => controls.push(message),
    };
    await Promise.all([broker.run(handler), broker.run(handler)]);
    await publisher.run({ onPublication() {}, onJoin() {}, onLeave() {}, onControl() {} });

    const marker = randomUUID();
    await publisher.publishControl(marker);
    // Every listener of one message runs in the same emit, so a duplicate would be there as soon as the first is.
    await waitFor('the marker', () => controls.includes(marker), 5_000);
    assert.deepEqual(
      controls.filter((m) => m === marker),
      [marker],
    );
  });

  it('subscribes in Redis only for channels with local subscribers', async (t) => {
    const broker = new RedisBroker({ url, prefix });
    t.after(() => broker.close());
    await broker.run({ onPublication() {}, onJoin() {}, onLeave() {}, onControl() {} });
    const channel = `local:${randomUUID()}`;
    const numsub = async () =>
      ((await admin.pubsub('NUMSUB', `${prefix}.client.${channel}`)) as [string, number])[1];
    assert.equal(await numsub(), 0);
    await broker.subscribe([channel]);
    assert.equal(await numsub(), 1);
    await broker.unsubscribe([channel]);
    assert.equal(await numsub(), 0);
  });

  it('keeps history in a Redis stream with entry id = offset and a meta hash', async (t) => {
    const broker = new RedisBroker({ url, prefix });
    t.after(() => broker.close());
    await broker.run({ onPublication() {}, onJoin() {}, onLeave() {}, onControl() {} });
    const channel = `stream:${randomUUID()}`;
    for (let i = 0; i < 3; i++)
      await broker.publish({ channel, data: String(i), history: { ...retention, size: 2 } });
    const ids = ((await admin.xrange(`${prefix}.stream.${channel}`, '-', '+')) as [string, string[]][]).map(
      ([id]) => id,
    );
    assert.deepEqual(ids, ['2-0', '3-0']);
    const meta = await admin.hgetall(`${prefix}.stream.meta.${channel}`);
    assert.equal(meta.s, '3');
    assert.match(meta.e ?? '', /^[a-zA-Z]{8}$/);
    assert.ok((await admin.pttl(`${prefix}.stream.${channel}`)) > 0, 'the stream has a TTL');
  });

  it('fails with broker_unavailable when Redis cannot be reached', async () => {
    const broker = new RedisBroker({ url: 'redis://127.0.0.1:1', prefix });
    try {
      await assert.rejects(
        Promise.race([
          broker.run({ onPublication() {}, onJoin() {}, onLeave() {}, onControl() {} }),
          sleep(10_000, 'still waiting', { ref: false }),
        ]),
        (e) => e instanceof BrokerError && e.code === 'broker_unavailable',
      );
    } finally {
      await broker.close();
    }
  });
});
