#!/usr/bin/env node
// Runs the fault suite: the instrument's own tests, then every scenario in faults/scenarios/ (or those whose name
// contains an argument: `npm run test:faults -- pg-stop`), one after another, each in its own process with its own
// private PostgreSQL cluster, Redis and Parley nodes. Prints each scenario's verdict line again at the end and
// `N passed, M failed`; exits non-zero when anything failed.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);
/** A scenario still running after this long is stopped (SIGTERM: it cleans up) and counted as failed. */
const SCENARIO_LIMIT_MS = 300_000;

const unit = readdirSync(join(root, 'faults/lib'))
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => join('faults/lib', f));
const instrument = spawnSync(process.execPath, ['--import', 'tsx', '--test', ...unit], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'inherit'],
  encoding: 'utf8',
});
if (instrument.status !== 0) {
  process.stdout.write(instrument.stdout);
  console.error('the fault instrument fails its own tests; no scenario was run');
  process.exit(1);
}

// The baseline first: when it fails, the instrument (not the service) is what needs looking at.
const scenarios = readdirSync(join(root, 'faults/scenarios'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.slice(0, -3))
  .filter((name) => filters.length === 0 || filters.some((x) => name.includes(x)))
  .sort((a, b) => (a === 'baseline' ? -1 : b === 'baseline' ? 1 : a.localeCompare(b)));
if (scenarios.length === 0) {
  console.error('no scenario matched');
  process.exit(1);
}

function runScenario(name) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join('faults/scenarios', `${name}.ts`)], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      process.stdout.write(chunk);
    });
    const stop = setTimeout(() => {
      console.error(`${name}: still running after ${SCENARIO_LIMIT_MS / 1000} s; stopping it`);
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 45_000).unref();
    }, SCENARIO_LIMIT_MS);
    child.on('exit', (code, signal) => {
      clearTimeout(stop);
      const verdict = out.split('\n').find((line) => line.startsWith(`${name}: `));
      const passed = code === 0 && verdict?.endsWith(' PASS') === true;
      resolve({ passed, line: verdict ?? `${name}: no verdict (exit ${code ?? signal}) FAIL` });
    });
  });
}

// Ctrl-C reaches the running scenario too (same process group): it cleans up its cluster and exits; then the
// suite stops instead of starting the next one.
let interrupted = false;
process.on('SIGINT', () => {
  interrupted = true;
});

const results = [];
for (const name of scenarios) {
  if (interrupted) break;
  console.log(`\n=== faults/scenarios/${name}.ts ===`);
  results.push(await runScenario(name));
}
const failed = results.filter((r) => !r.passed).length;
console.log(`\n${results.map((r) => r.line).join('\n')}`);
console.log(`\n${results.length - failed} passed, ${failed} failed`);
process.exit(interrupted ? 130 : failed ? 1 : 0);
