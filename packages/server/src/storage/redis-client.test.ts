import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { testRedisUrl } from '@parley/testing/databases';
import { createRateLimiter } from '../ratelimit/index.ts';
import { closeRedis, failFastRedis } from './redis-client.ts';

// Building starts nothing (docs/architecture.md "Composition"): the server's Redis connections are made when built
// and connected by their first use or the server's start.
describe('fail-fast Redis connections are connected by their first use, not when built', () => {
  it('stays unconnected until `connect`, which every caller shares', async () => {
    const { redis, connect } = failFastRedis(testRedisUrl());
    assert.equal(redis.status, 'wait');
    const first = connect();
    assert.equal(connect(), first, 'one connection attempt, shared');
    await first;
    assert.equal(redis.status, 'ready');
    assert.equal(await redis.ping(), 'PONG');
    const ended = once(redis, 'end');
    await closeRedis(redis);
    await ended;
  });

  it('closes a connection never used without connecting it', async () => {
    const { redis } = failFastRedis(testRedisUrl());
    let connected = false;
    redis.on('connect', () => {
      connected = true;
    });
    await closeRedis(redis);
    assert.equal(redis.status, 'end');
    assert.equal(connected, false);
  });

  it('a Redis rate limiter connects at its first check and counts in Redis, shared with another node', async () => {
    const prefix = `rl-lazy-${randomBytes(4).toString('hex')}`;
    const a = createRateLimiter(testRedisUrl(), prefix);
    const b = createRateLimiter(testRedisUrl(), prefix);
    try {
      const rule = { limit: 5, windowMs: 60_000 };
      assert.equal((await a.hit('k', rule)).count, 1);
      assert.equal((await b.hit('k', rule)).count, 2, "the second node sees the first node's hit");
    } finally {
      await a.close();
      await b.close();
    }
  });
});
