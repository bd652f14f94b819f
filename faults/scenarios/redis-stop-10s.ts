// Redis stops for 10 s under traffic (the broker is unreachable: publishes must fail fast with a temporary error,
// REST routes that need it answer 503), then starts again empty on the same port.

import { setTimeout as sleep } from 'node:timers/promises';
import { runScenario } from '../lib/scenario.ts';

await runScenario({
  name: 'redis-stop-10s',
  async fault(ctx) {
    await ctx.cluster.redis.stop('SIGTERM');
    ctx.log('Redis stopped');
    await sleep(10_000);
    await ctx.cluster.redis.start();
    const t0 = Date.now();
    ctx.log('Redis started again');
    await ctx.measureAnswersAgain(t0);
  },
});
