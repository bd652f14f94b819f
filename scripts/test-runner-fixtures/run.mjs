// scripts/test-runner.test.ts runs the runner on fixture files through this, as `npm test` would:
// `node run.mjs <options JSON> <file>…`; the options are runMain's time limits and concurrency.
import { join } from 'node:path';
import { runMain } from '../test-runner.mjs';

const root = new URL('../..', import.meta.url).pathname;
const [options, ...files] = process.argv.slice(2);
process.exitCode = await runMain(files, {
  root,
  env: process.env,
  concurrency: 1,
  fileTimeoutMs: 60_000,
  exitGraceMs: 10_000,
  eventsDir: join(root, 'test-artifacts', `test-events-fixtures-${process.pid}`),
  ...JSON.parse(options),
});
