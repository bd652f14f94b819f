import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OutageAwareRedis, outageAwareRedisOptions } from '@parley/realtime';
import { testRedisUrl } from '@parley/testing/databases';
import type { Redis } from 'ioredis';
import { createLogger } from '../logging/logger.ts';
import { replyCoordinationFor, type WebchatDeps } from './webchat.ts';

// The reply coordination connection (signals, heartbeats, shown texts) has the outage settings of every other Redis
// client (storage/redis-client.ts, packages/realtime README "Redis outages"): commands fail at once while Redis is
// away instead of queueing, time out (judged after the socket was read: OutageAwareRedis), and the connection comes
// back by itself.
describe('reply coordination over Redis: the one connection factory', () => {
  it('uses the fail-fast outage settings, on the command connection and its subscriber', async () => {
    const closers: Array<() => Promise<void>> = [];
    const deps = {
      config: {
        redisUrl: testRedisUrl(),
        webchat: { realtimeRedisPrefix: `t${Date.now()}`, replyLeaseMs: 1_000 },
      },
      onClose: (close: () => Promise<void>) => closers.push(close),
    } as unknown as WebchatDeps;
    const { signals } = replyCoordinationFor(deps, createLogger('silent'));
    try {
      await signals.listen(() => {});
      // The private connections under test (the signals' PUB/SUB channel, storage/redis-signal-channel.ts).
      const inside = signals as unknown as { channel: { redis: Redis; subscriber: Redis } };
      const connections = [inside.channel.redis, inside.channel.subscriber];
      const expected = outageAwareRedisOptions();
      for (const redis of connections) {
        for (const key of [
          'enableOfflineQueue',
          'maxRetriesPerRequest',
          'autoResendUnfulfilledCommands',
          'connectTimeout',
        ] as const)
          assert.equal(redis.options[key], expected[key], key);
        assert.ok(redis instanceof OutageAwareRedis, 'commands time out as OutageAwareRedis judges them');
        assert.equal(typeof redis.options.retryStrategy, 'function');
        assert.ok((redis.options.retryStrategy!(1_000) ?? 0) <= 600, 'reconnects at most ~0.5 s apart');
        assert.equal(redis.status, 'ready');
      }
    } finally {
      for (const close of closers) await close();
    }
  });
});
