// No fault: the same traffic, a quiet moment in place of a fault, the same figures. It must pass on any healthy
// build, which shows the instrument counts right (every message acknowledged, stored, delivered and answered).

import { setTimeout as sleep } from 'node:timers/promises';
import { runScenario } from '../lib/scenario.ts';

await runScenario({
  name: 'baseline',
  async fault(ctx) {
    await sleep(5_000);
    await ctx.measureAnswersAgain(Date.now());
  },
});
