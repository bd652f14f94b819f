import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OutageAwareRedis } from './redis-connection.ts';

const url = process.env.PARLEY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const TIMEOUT_MS = 200;

/** Holds the event loop as a burst on a loaded machine does: nothing else of this process runs meanwhile. */
function holdTheLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy on purpose
  }
}

/** Resolves when the connection closes (`events.once` would reject on the 'error' the dropped socket reports). */
const closeOf = (redis: OutageAwareRedis): Promise<void> =>
  new Promise((resolve) => redis.once('close', () => resolve()));

describe('OutageAwareRedis: command time-outs', () => {
  it('answers a command whose reply arrived while the event loop was held past the time-out, and keeps the connection', async () => {
    const redis = new OutageAwareRedis(url, {}, TIMEOUT_MS);
    await redis.connect();
    let closed = false;
    redis.on('close', () => {
      closed = true;
    });
    try {
      const pong = redis.ping();
      // Redis answers within a millisecond; the answer waits in the socket while the loop is held. ioredis' own
      // commandTimeout and socketTimeout failed the PING and dropped the socket here (timers run before the poll).
      holdTheLoop(TIMEOUT_MS * 3);
      assert.equal(await pong, 'PONG');
      assert.equal(await redis.ping(), 'PONG', 'the next command too, on the same connection');
      assert.equal(closed, false, 'the connection was not dropped');
      assert.equal(redis.status, 'ready');
    } finally {
      redis.disconnect();
    }
  });

  it('fails a command Redis does not answer within the time-out, and drops the connection', async () => {
    const redis = new OutageAwareRedis(url, {}, TIMEOUT_MS);
    redis.on('error', () => {});
    await redis.connect();
    try {
      const closed = closeOf(redis);
      // BLPOP on a key nobody pushes to: Redis holds the answer for 30 s, as a partitioned Redis would.
      await assert.rejects(redis.blpop(`parley-test:never-pushed:${process.pid}`, 30), /Command timed out/);
      await closed;
    } finally {
      redis.disconnect();
    }
  });

  it('gives another connection the same settings (withSameSettings)', async () => {
    const redis = new OutageAwareRedis(url, {}, TIMEOUT_MS);
    const twin = redis.withSameSettings({ autoResubscribe: false });
    try {
      assert.ok(twin instanceof OutageAwareRedis);
      assert.equal(twin.options.enableOfflineQueue, false);
      assert.equal(twin.options.autoResubscribe, false);
      twin.on('error', () => {});
      await twin.connect();
      const closed = closeOf(twin);
      await assert.rejects(twin.blpop(`parley-test:never-pushed:${process.pid}`, 30), /Command timed out/);
      await closed;
    } finally {
      twin.disconnect();
      redis.disconnect();
    }
  });
});
