import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TestClock } from '@parley/testing/clock';
import { testRedisUrl } from '@parley/testing/databases';
import { PausableProxy } from '@parley/testing/pausable-proxy';
import { waitFor } from '@parley/testing/wait';
import { createRateLimiter, MemoryRateLimiter, type RateLimiter, type RateLimitRule } from './index.ts';

/** Limit checks sit in front of requests answered within 2 s (a realtime publish); slack for a loaded machine. */
const PROMPT_MS = 2_000 + 1_500;

/** One backend for the contract: `runRateLimiterContract(factory)` runs every test against it. */
interface RateLimiterFactory {
  /** The limiter's `kind`, and its name in test names. */
  name: string;
  /** A limiter with fresh, empty state. */
  createLimiter(): RateLimiter;
  /** Returns once the window that `key` has open under `rule` has ended, by the limiter's own clock. */
  passWindow(limiter: RateLimiter, key: string, rule: RateLimitRule): Promise<void>;
}

/** One contract, both implementations: what webchat, portal and the token endpoint rely on. */
function runRateLimiterContract(factory: RateLimiterFactory): void {
  describe(`rate limiter contract (${factory.name})`, () => {
    let limiter: RateLimiter;
    const key = (label: string) => `${label}:${randomBytes(4).toString('hex')}`;
    before(() => {
      limiter = factory.createLimiter();
    });
    after(() => limiter.close());

    it('reports its kind', () => {
      assert.equal(limiter.kind, factory.name);
    });

    it('allows hits up to the limit and refuses the next ones in the window', async () => {
      const k = key('hits');
      const rule = { limit: 3, windowMs: 60_000 };
      const states = [];
      for (let i = 0; i < 5; i++) states.push(await limiter.hit(k, rule));
      assert.deepEqual(
        states.map((s) => [s.count, s.allowed, s.remaining]),
        [
          [1, true, 2],
          [2, true, 1],
          [3, true, 0],
          [4, false, 0],
          [5, false, 0],
        ],
      );
      const last = states[4]!;
      assert.ok(last.resetMs > 0 && last.resetMs <= 60_000, `resetMs ${last.resetMs}`);
      assert.equal(last.retryAfterSeconds, Math.ceil(last.resetMs / 1000));
    });

    it('peek counts nothing and says whether one more hit would pass', async () => {
      const k = key('peek');
      const rule = { limit: 2, windowMs: 60_000 };
      assert.equal((await limiter.peek(k, rule)).count, 0);
      assert.equal((await limiter.peek(k, rule)).allowed, true);
      await limiter.hit(k, rule);
      assert.equal((await limiter.peek(k, rule)).allowed, true);
      await limiter.hit(k, rule);
      const blocked = await limiter.peek(k, rule);
      assert.equal(blocked.allowed, false);
      assert.equal(blocked.count, 2);
      assert.ok(blocked.retryAfterSeconds >= 1);
    });

    it('adds a cost in one hit', async () => {
      const k = key('cost');
      const rule = { limit: 10, windowMs: 60_000 };
      assert.equal((await limiter.hit(k, rule, 7)).count, 7);
      const over = await limiter.hit(k, rule, 4);
      assert.equal(over.count, 11);
      assert.equal(over.allowed, false);
    });

    it('keeps keys apart', async () => {
      const rule = { limit: 1, windowMs: 60_000 };
      const a = key('a');
      await limiter.hit(a, rule);
      assert.equal((await limiter.hit(a, rule)).allowed, false);
      assert.equal((await limiter.hit(key('b'), rule)).allowed, true);
    });

    it('starts counting again in the next window', async () => {
      const k = key('window');
      const rule = { limit: 1, windowMs: 300 };
      // The window opens at the first hit (not at a clock boundary), so the second hit right after shares it.
      await limiter.hit(k, rule);
      assert.equal((await limiter.hit(k, rule)).allowed, false);
      await factory.passWindow(limiter, k, rule);
      const fresh = await limiter.hit(k, rule);
      assert.equal(fresh.count, 1);
      assert.equal(fresh.allowed, true);
    });

    it('reset forgets a key', async () => {
      const k = key('reset');
      const rule = { limit: 1, windowMs: 60_000 };
      await limiter.hit(k, rule);
      await limiter.reset(k);
      assert.equal((await limiter.hit(k, rule)).count, 1);
    });

    it('rejects nonsensical rules', async () => {
      await assert.rejects(limiter.hit(key('bad'), { limit: 0, windowMs: 1000 }), RangeError);
      await assert.rejects(limiter.hit(key('bad'), { limit: 1, windowMs: 0 }), RangeError);
      await assert.rejects(limiter.hit(key('bad'), { limit: 1, windowMs: 1000 }, -1), RangeError);
    });
  });
}

const memoryClock = new TestClock();
runRateLimiterContract({
  name: 'memory',
  createLimiter: () => new MemoryRateLimiter(undefined, memoryClock.now),
  passWindow: async (_limiter, _key, rule) => memoryClock.advance(rule.windowMs + 1),
});
runRateLimiterContract({
  name: 'redis',
  createLimiter: () => createRateLimiter(testRedisUrl(), `parley-test:${randomBytes(6).toString('hex')}:`),
  // Redis counts on its own clock (TIME), which a test cannot move: wait (bounded) until a read finds the window over.
  passWindow: async (limiter, key, rule) => {
    await waitFor(
      'the window to end by Redis’s clock',
      async () => (await limiter.hit(key, rule, 0)).count === 0,
      5_000,
      20,
    );
  },
});

describe('redis rate limiter specifics', () => {
  it('shares counts between two connections (two nodes)', async () => {
    const prefix = `parley-test:${randomBytes(6).toString('hex')}:`;
    const nodeA = createRateLimiter(testRedisUrl(), prefix);
    const nodeB = createRateLimiter(testRedisUrl(), prefix);
    try {
      const rule = { limit: 2, windowMs: 60_000 };
      await nodeA.hit('shared', rule);
      await nodeB.hit('shared', rule);
      assert.equal((await nodeA.hit('shared', rule)).allowed, false);
      assert.equal((await nodeB.peek('shared', rule)).count, 3);
    } finally {
      await nodeA.close();
      await nodeB.close();
    }
  });

  it('counts per node, promptly, when Redis cannot be reached at all', async () => {
    const limiter = createRateLimiter('redis://127.0.0.1:1', 'parley-test:down:');
    try {
      const rule = { limit: 2, windowMs: 60_000 };
      const started = Date.now();
      const states = [];
      for (let i = 0; i < 3; i++) states.push(await limiter.hit('k', rule));
      assert.deepEqual(
        states.map((s) => [s.count, s.allowed]),
        [
          [1, true],
          [2, true],
          [3, false],
        ],
      );
      assert.equal((await limiter.peek('k', rule)).allowed, false);
      await limiter.reset('k');
      assert.equal((await limiter.hit('k', rule)).allowed, true, 'reset forgets the local count');
      assert.ok(Date.now() - started < PROMPT_MS, `answered within ${Date.now() - started} ms`);
    } finally {
      await limiter.close();
    }
  });

  it('counts per node while partitioned from Redis, and shares the counts again once it is back', async () => {
    const proxy = new PausableProxy(Number(new URL(testRedisUrl()).port || 6379));
    await proxy.listen();
    const prefix = `parley-test:${randomBytes(6).toString('hex')}:`;
    const partitioned = createRateLimiter(proxy.url, prefix);
    const other = createRateLimiter(testRedisUrl(), prefix);
    const rule = { limit: 3, windowMs: 60_000 };
    try {
      await partitioned.hit('shared', rule);
      assert.equal((await other.hit('shared', rule)).count, 2, 'one count for both nodes');

      proxy.pause();
      // This node counts alone from zero: the limit still holds, per node, and no check waits on Redis.
      const started = Date.now();
      const local = [];
      for (let i = 0; i < 4; i++) local.push(await partitioned.hit('shared', rule));
      assert.deepEqual(
        local.map((s) => [s.count, s.allowed]),
        [
          [1, true],
          [2, true],
          [3, true],
          [4, false],
        ],
      );
      assert.ok(Date.now() - started < PROMPT_MS, `four checks answered within ${Date.now() - started} ms`);
      // The other node still counts in Redis. (This node's hits of the partition may reach Redis late, when the
      // path is back and TCP delivers what it still held: the shared count is at least 5, never this node's 4.)
      for (let i = 0; i < 3; i++) await other.hit('shared', rule);

      proxy.resume();
      const shared = async () => (await other.peek('shared', rule)).count;
      await waitFor(
        'the partitioned node counts in Redis again',
        async () => (await partitioned.peek('shared', rule)).count === (await shared()),
        10_000,
      );
      assert.ok((await shared()) >= 5);
      assert.equal((await partitioned.hit('shared', rule)).allowed, false, 'the shared count decides again');
    } finally {
      await partitioned.close();
      await other.close();
      await proxy.close();
    }
  });
});
