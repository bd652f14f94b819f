// A rolling restart under traffic: SIGTERM node A, wait until it has drained and exited with code 0, start it
// again on the same port; then the same for node B. One node always serves; visitors keep chatting throughout.
// "Answers again" is measured from each SIGTERM in a conversation whose WebSocket was on the stopping node.

import { setTimeout as sleep } from 'node:timers/promises';
import { runScenario } from '../lib/scenario.ts';

await runScenario({
  name: 'rolling-restart',
  async fault(ctx) {
    for (const [index, node] of ctx.cluster.nodes.entries()) {
      const visitor = ctx.visitorOnNode(index) ?? ctx.probe;
      const t0 = Date.now();
      const answered = ctx.measureAnswersAgain(t0, visitor);
      const code = await node.terminate(30_000);
      ctx.log(`${node.name} exited with ${code === null ? 'no exit within 30 s (killed)' : `code ${code}`}`);
      if (code !== 0)
        ctx.problem(
          `${node.name} exited with ${code === null ? 'nothing within 30 s' : `code ${code}`} after SIGTERM (expected 0); log: ${node.logFile}`,
        );
      await node.start();
      ctx.log(`${node.name} started again`);
      await answered;
      await sleep(3_000);
    }
  },
});
