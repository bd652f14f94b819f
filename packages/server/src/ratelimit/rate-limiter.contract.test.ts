import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { TestClock } from '../testing/clock.ts';
import { testRedisUrl } from '../testing/databases.ts';
import { createRateLimiter, MemoryRateLimiter, type RateLimiter } from './index.ts';

/** One backend for the contract: `runRateLimiterContract(factory)` runs every test against it. */
interface RateLimiterFactory {
  /** The limiter's `kind`, and its name in test names. */
  name: string;
  /** A limiter with fresh, empty state. */
  createLimiter(): RateLimiter;
  /** Lets `ms` pass for the limiter's clock. */
  passTime(ms: number): Promise<void>;
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
      await factory.passTime(650);
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
  passTime: async (ms) => memoryClock.advance(ms),
});
runRateLimiterContract({
  name: 'redis',
  createLimiter: () => createRateLimiter(testRedisUrl(), `parley-test:${randomBytes(6).toString('hex')}:`),
  // Redis counts on its own clock (TIME), which a test cannot move: real time passes, bounded (two windows).
  passTime: (ms) => sleep(ms),
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

  it('rejects instead of hanging when Redis is unreachable', async () => {
    const limiter = createRateLimiter('redis://127.0.0.1:1', 'parley-test:down:');
    try {
      const started = Date.now();
      await assert.rejects(limiter.hit('k', { limit: 1, windowMs: 1000 }));
      assert.ok(Date.now() - started < 15_000);
    } finally {
      await limiter.close();
    }
  });
});
