// PostgreSQL stops (a clean, fast shutdown that disconnects every session) for 30 s under traffic, then starts
// again. Meanwhile nodes stay up and answer 503 / temporary publish errors; visitors retry with the same
// client_message_id. Goal: nothing acknowledged lost or duplicated, answering again within 15 s of the restart.

import { setTimeout as sleep } from 'node:timers/promises';
import { runScenario } from '../lib/scenario.ts';

await runScenario({
  name: 'pg-stop-30s',
  async fault(ctx) {
    await ctx.cluster.pg.stop('fast');
    ctx.log('PostgreSQL stopped');
    await sleep(30_000);
    await ctx.cluster.pg.start();
    const t0 = Date.now();
    ctx.log('PostgreSQL started again');
    await ctx.measureAnswersAgain(t0);
  },
});
