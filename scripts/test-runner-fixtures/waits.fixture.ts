// scripts/test-runner.test.ts: a file that takes long enough to interrupt the run while it is running; it creates
// the file named by RUNNER_FIXTURE_STARTED once its test has started.
import { writeFileSync } from 'node:fs';
import { it } from 'node:test';

it('waits a minute', async () => {
  writeFileSync(process.env.RUNNER_FIXTURE_STARTED!, '');
  await new Promise((resolve) => setTimeout(resolve, 60_000));
});
