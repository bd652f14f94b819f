// PostgreSQL terminates every backend of Parley's database (as a failover or an administrator's
// pg_terminate_backend does) in the middle of traffic, twice. Pools must reconnect by themselves; nothing
// acknowledged may be lost and the conversation must answer again within 15 s of each termination.

import { setTimeout as sleep } from 'node:timers/promises';
import { runScenario } from '../lib/scenario.ts';

await runScenario({
  name: 'pg-terminate',
  async fault(ctx) {
    for (const round of [1, 2]) {
      const t0 = Date.now();
      const terminated = await ctx.cluster.pg.terminateBackends();
      ctx.log(`round ${round}: terminated ${terminated} PostgreSQL backends`);
      await ctx.measureAnswersAgain(t0);
      await sleep(3_000);
    }
  },
});
