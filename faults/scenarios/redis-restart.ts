// Redis is killed (SIGKILL: no clean shutdown, its memory gone — no persistence) and started again at once on
// the same port. Broker connections, PUB/SUB subscriptions, history streams and reply turns must come back by
// themselves; a client whose history was lost reads REST instead.
import { runScenario } from '../lib/scenario.ts';

await runScenario({
  name: 'redis-restart',
  async fault(ctx) {
    await ctx.cluster.redis.stop('SIGKILL');
    await ctx.cluster.redis.start();
    const t0 = Date.now();
    ctx.log('Redis killed and started again');
    await ctx.measureAnswersAgain(t0);
  },
});
