import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { closeRedis } from '../storage/redis-client.ts';
import { FixedWindowRateLimiter } from './rate-limiter.ts';

/**
 * One window per key in a Redis hash {e: epoch ms the window ends, c: count}, updated atomically by a script so that
 * every node shares the count. A window opens at a key's first counted hit and lasts `window` ms (not aligned to
 * the clock: an epoch-aligned window lets a burst that straddles a boundary through twice the limit). Time comes
 * from Redis (`TIME`), so windows agree across nodes whatever their clocks say; the hash expires with its window.
 * Only KEYS[1] is touched (cluster-safe).
 * KEYS: the key. ARGV: cost (0 = peek), window ms. Returns {count, ms until the window ends}.
 */
const FIXED_WINDOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
local stored = redis.call('HMGET', KEYS[1], 'e', 'c')
local count = 0
local ends = now + window
if stored[1] and tonumber(stored[1]) > now then
  ends = tonumber(stored[1])
  count = tonumber(stored[2])
end
local cost = tonumber(ARGV[1])
if cost > 0 then
  count = count + cost
  redis.call('HSET', KEYS[1], 'e', ends, 'c', count)
  redis.call('PEXPIRE', KEYS[1], ends - now)
end
return {count, ends - now}
`;
const FIXED_WINDOW_SHA = createHash('sha1').update(FIXED_WINDOW).digest('hex');

export interface RedisRateLimiterOptions {
  /** Put in front of every key (e.g. `parley:rl:`), so several deployments or tests can share one Redis. */
  keyPrefix: string;
  /** Close the connection on `close()` (true when the limiter created it). */
  ownsConnection?: boolean;
}

/** Counts shared by every node through Redis (set `REDIS_URL`). */
export class RedisRateLimiter extends FixedWindowRateLimiter {
  readonly kind = 'redis';

  constructor(
    private readonly redis: Redis,
    private readonly options: RedisRateLimiterOptions,
  ) {
    super();
  }

  /** Whether the connection is ready: while it is not, every call fails (FallbackRateLimiter counts locally). */
  connected(): boolean {
    return this.redis.status === 'ready';
  }

  async reset(key: string): Promise<void> {
    await this.redis.del(this.options.keyPrefix + key);
  }

  async close(): Promise<void> {
    if (this.options.ownsConnection) await closeRedis(this.redis);
  }

  protected async countWindow(key: string, cost: number, windowMs: number): Promise<[number, number]> {
    const fullKey = this.options.keyPrefix + key;
    try {
      return (await this.redis.evalsha(FIXED_WINDOW_SHA, 1, fullKey, cost, windowMs)) as [number, number];
    } catch (err) {
      // The script cache is empty after a Redis restart or on a new server: load it by running it once in full.
      if (!(err instanceof Error) || !err.message.includes('NOSCRIPT')) throw err;
      return (await this.redis.eval(FIXED_WINDOW, 1, fullKey, cost, windowMs)) as [number, number];
    }
  }
}
