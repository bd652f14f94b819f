#!/usr/bin/env node
// Runs every *.test.ts in the workspace (packages/, scripts/ for checks of the repository as a whole, tools/ for the
// repository's own tools such as the import check, the fault instrument's own unit tests in faults/lib/, which
// need no fault cluster (the scenarios are `npm run test:faults`), and the benches' own unit tests in bench/, which
// run no benchmark),
// each file in its own process with node's test runner (scripts/test-runner.mjs): a pool of TEST_CONCURRENCY files
// (default 3), a time-out per file (TEST_FILE_TIMEOUT seconds, default 300) that fails the file and names the test
// that was running, a file whose tests ended but whose process stays up (something left open) failed after 30 s, and
// a closing `N passed, N failed, N skipped` line that CI reads, printed also when a file crashes or hangs and when
// the run is interrupted (Ctrl-C, SIGTERM). The files are first compiled to JavaScript in one esbuild build
// (scripts/test-build.mjs: Node 20 loads TypeScript through `tsx` at a high price per module); TEST_LOADER=tsx skips
// that and runs the sources through `tsx`.
// `npm test -- <path substring> …` runs the files whose path contains one of the substrings.
//
// PostgreSQL and Redis suites are part of "every test": when DATABASE_URL / REDIS_URL are not set we point them at
// the services the development machines run on 127.0.0.1, and a suite whose service does not answer fails loudly.
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { buildTests } from './test-build.mjs';
import { runMain } from './test-runner.mjs';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);

function findTests(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) findTests(path, out);
    else if (name.endsWith('.test.ts')) out.push(relative(root, path));
  }
  return out;
}

const files = [
  ...findTests(join(root, 'packages')),
  ...findTests(join(root, 'scripts')),
  ...findTests(join(root, 'tools')),
  ...findTests(join(root, 'faults/lib')),
  ...findTests(join(root, 'bench')),
]
  .filter((f) => !f.includes('/e2e/'))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

const env = {
  ...process.env,
  PARLEY_TEST_DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  PARLEY_TEST_REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  NODE_ENV: 'test',
};
// Tests build their own config; the ambient service URLs must not leak into the embedded-default cases.
delete env.DATABASE_URL;
delete env.REDIS_URL;

const seconds = (name, fallback) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`${name} must be a positive number of seconds`);
    process.exit(1);
  }
  return value * 1000;
};

const artifacts = join(root, 'test-artifacts');

/** The build folders of runs that were killed before they could remove their own. */
function removeBuildsOfEndedRuns() {
  let names = [];
  try {
    names = readdirSync(artifacts);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^build-(\d+)$/.exec(name)?.[1]);
    if (!pid) continue;
    try {
      process.kill(pid, 0);
    } catch {
      rmSync(join(artifacts, name), { recursive: true, force: true });
    }
  }
}
// TEST_LOADER=tsx runs the TypeScript files as they are (no compile step), as a check of the compiled run.
let bundles;
let buildDir;
if (process.env.TEST_LOADER !== 'tsx') {
  removeBuildsOfEndedRuns();
  try {
    // A folder of this run's own: another `npm test` at the same time (a subset while the whole suite runs) must not
    // replace the bundles under it.
    buildDir = join(artifacts, `build-${process.pid}`);
    bundles = await buildTests(files, { root, outDir: buildDir });
  } catch (error) {
    console.error(
      `the test files could not be compiled (TEST_LOADER=tsx runs them without compiling):\n${error.message}`,
    );
    console.log(`0 passed, ${files.length} failed, 0 skipped`);
    process.exit(1);
  }
}
const exitCode = await runMain(files, {
  bundles,
  root,
  env,
  concurrency: Number(process.env.TEST_CONCURRENCY ?? 3),
  fileTimeoutMs: seconds('TEST_FILE_TIMEOUT', 300),
  // Time for the last `after` hooks too (the runner sees no event for them): closing several Chromiums on a loaded
  // machine has taken more than 10 s.
  exitGraceMs: 30_000,
  eventsDir: join(artifacts, `test-events-${process.pid}`),
  durationsFile: join(artifacts, 'test-durations.json'),
  // What each file took in one whole run (ms): the order of a first run on a fresh clone, longest first.
  durationsSeedFile: join(root, 'scripts', 'test-durations.json'),
});
if (buildDir) rmSync(buildDir, { recursive: true, force: true });
process.exitCode = exitCode;
