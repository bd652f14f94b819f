#!/usr/bin/env node
// `npm start`: serves from the production build (dist/, plain JavaScript: no compiler at run time), building it
// first when it is missing or older than the sources. Then the same as `npx parley serve`.
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BUILT_ENTRY, buildState, ROOT } from '../packages/server/bin/build-state.mjs';

const state = buildState();
if (state !== 'current') {
  // The build runs in a process of its own, so the server never holds the compiler in memory.
  process.stderr.write(`parley: the build in dist/ is ${state}; running \`npm run build\` first\n`);
  const build = spawnSync(process.execPath, [fileURLToPath(new URL('./build.mjs', import.meta.url))], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
const { runCli } = await import(pathToFileURL(BUILT_ENTRY).href);
process.exitCode = await runCli(['serve', ...process.argv.slice(2)]);
