#!/usr/bin/env node
// Runs every *.test.ts in the workspace (packages/, scripts/ for checks of the repository as a whole, tools/ for the
// repository's own tools such as the import check, and the fault instrument's own unit tests in faults/lib/, which
// need no fault cluster; the scenarios are `npm run test:faults`) with node's test runner (its closing
// "# pass / # fail" lines are what CI reads). Files are listed explicitly because `node --test` on Node 20 does not
// expand globs.
//
// PostgreSQL and Redis suites are part of "every test": when DATABASE_URL / REDIS_URL are not set we point them at
// the services the development machines run on 127.0.0.1, and a suite whose service does not answer fails loudly.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

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

const concurrency = process.env.TEST_CONCURRENCY ?? '3';
mkdirSync(join(root, 'test-artifacts'), { recursive: true });
const tapFile = join(root, 'test-artifacts', `results-${process.pid}.tap`);
const result = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=tap',
    `--test-reporter-destination=${tapFile}`,
    ...files,
  ],
  { cwd: root, env, stdio: 'inherit' },
);
// One unambiguous closing line, whatever the reporter above printed.
const tap = readFileSync(tapFile, 'utf8');
const count = (name) => Number(tap.match(new RegExp(`^# ${name} (\\d+)$`, 'm'))?.[1] ?? 0);
console.log(
  `\n${count('pass')} passed, ${count('fail') + count('cancelled')} failed, ${count('skipped')} skipped`,
);
process.exit(result.status ?? 1);
