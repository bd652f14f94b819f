#!/usr/bin/env node
// Runs the benchmarks in bench/ (every *.bench.ts, or those whose path contains an argument) one after another,
// each in its own process so one benchmark's heap and sockets do not colour the next one's figures.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
// `npm run bench -- realtime --skip-capacity`: words filter the benchmarks, `--flags` are passed to each of them.
const filters = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const benches = readdirSync(join(root, 'bench'), { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
let failed = 0;
for (const file of benches) {
  console.log(`\n=== bench/${file} ===`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--expose-gc', join('bench', file), ...flags], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, NODE_ENV: 'production' },
  });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
