// PostgreSQL stops (a fast shutdown that disconnects every session) for 5 s while replies stream: four visitors'
// long stories are mid-stream, and the regular traffic's short replies too. Every reply keeps streaming to its
// visitor and is stored complete with its full text once the database is back: 0 replies with an error block
// (reply_interrupted included), 0 words taken back; plus the common goals (nothing acknowledged lost or duplicated,
// answering again within 15 s of the restart).

import { runScenario } from '../lib/scenario.ts';
import { storiesThroughPgStop } from '../lib/stories-through-outage.ts';

await runScenario({
  name: 'pg-stop-5s-streaming',
  fault: (ctx) => storiesThroughPgStop(ctx, 5_000),
});
