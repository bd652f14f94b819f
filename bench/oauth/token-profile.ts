// A CPU profile of the token endpoint at default settings (issue 27): one Parley process under `--cpu-prof`, driven
// for BENCH_ROUND_SECONDS (default 10) by the bench's load generator, then a table of where its CPU went (self
// time by function, and by package). Not a bench row: run it by hand when bench/oauth/token.bench.ts shows a gap.
//   node --import tsx bench/oauth/token-profile.ts [profile-dir]
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@parley/testing/process';
import { runLoad } from '../lib/http-load.ts';
import { basicAuth, createBenchClient, parleyEnv, repoRoot, stop, waitForUp } from '../lib/parley-process.ts';

const SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 10);
const profileDir = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'parley-token-profile-'));

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-'));
const port = await freePort();
const env = parleyEnv(port, dataDir, { PARLEY_TOKENS_PER_MINUTE: String(1_000_000_000) });
delete env.LOG_LEVEL;
const { client } = await createBenchClient({ ...env, LOG_LEVEL: 'error' });
// As startParleyProcess, with the profiler on (Node refuses --cpu-prof in NODE_OPTIONS).
const spawnedAt = Date.now();
const child = await waitForUp(
  spawn(
    process.execPath,
    ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, join(repoRoot, 'packages/server/bin/parley.js'), 'serve'],
    {
      cwd: repoRoot,
      env: { PARLEY_WORKERS: '1', ...env, NODE_ENV: 'production' },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  ),
  `http://127.0.0.1:${port}/readyz`,
);
/** The load's span in ms after the spawn: only samples inside it count (not start-up, not shutdown). */
let window: [number, number] = [0, 0];
try {
  const loadStart = Date.now() - spawnedAt;
  const load = await runLoad({
    url: `http://127.0.0.1:${port}/platform/v1/auth/token/client-credentials`,
    method: 'POST',
    headers: {
      authorization: basicAuth(client.client_id!, client.client_secret!),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials&scope=connector%3Awrite',
    connections: 16,
    duration: SECONDS,
  });
  window = [loadStart, Date.now() - spawnedAt];
  console.log(`${load.requests.total} grants in ${SECONDS} s`);
} finally {
  await stop(child);
  rmSync(dataDir, { recursive: true, force: true });
}

const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error(`no profile in ${profileDir}`);
const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
let at = 0;
for (const [i, id] of profile.samples.entries()) {
  const delta = profile.timeDeltas[i] ?? 0;
  at += delta;
  if (at / 1000 < window[0] || at / 1000 > window[1]) continue;
  selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
}
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
for (const [id, us] of selfUs) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  const short = url.replace(/^.*\/(node_modules\/(@[^/]+\/)?[^/]+|packages\/[^/]+)\//, '$1/');
  byFunction.set(
    `${functionName || '(anonymous)'} ${short}:${lineNumber + 1}`,
    (byFunction.get(`${functionName || '(anonymous)'} ${short}:${lineNumber + 1}`) ?? 0) + us,
  );
  const pkg =
    /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url)?.[1] ??
    (/packages\/([^/]+)/.exec(url)?.[1]
      ? `parley:${/packages\/([^/]+)/.exec(url)![1]}`
      : url.startsWith('node:')
        ? 'node'
        : url === ''
          ? '(native/gc/idle)'
          : 'other');
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
}
const top = (m: Map<string, number>, n: number) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`);
console.log(
  `profile: ${join(profileDir, file)}\n\nby package:\n${top(byPackage, 25).join('\n')}\n\nby function (self):\n${top(byFunction, 50).join('\n')}`,
);
