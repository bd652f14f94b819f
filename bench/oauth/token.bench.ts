// Token endpoint throughput: Parley (SQLite storage + audit, its default embedded setup) against panva's
// oidc-provider v9 (client credentials, RFC 9068 JWT access tokens, ES256, in-memory storage), in the same run on
// the same machine, each server in its own child process, driven over keep-alive HTTP from this process by the lean
// generator in bench/lib/http-load.ts (on a 2-core machine autocannon's own CPU use is a large share of what the
// faster server could use). Prints grants/s and p50/p99 for both, and Parley's p99 at half of its measured peak.
// A third server, the floor (token-floor-server.mjs), does only the essential work of a grant on raw node:http: it
// shows what this machine allows at all, so a missed ratio can be told apart from a slow implementation.
//
// Goals (printed beside the figures): ≥ 3 × oidc-provider's grants/s, and p99 < 20 ms at half of Parley's peak.
// Parley's per-client token quota is lifted for the run (PARLEY_TOKENS_PER_MINUTE) — the limiter still runs on
// every request, only its limit is out of reach of one client hammering the endpoint.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../packages/server/src/testing/process.ts';
import { type LoadResult, runLoad } from '../lib/http-load.ts';
import {
  assertClean,
  basicAuth,
  createBenchClient,
  fmt,
  parleyEnv,
  repoRoot as root,
  startParleyProcess,
  stop,
  waitForUp,
} from '../lib/parley-process.ts';
import { cpuMs } from '../lib/proc-stats.ts';
import { median } from '../lib/stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const ROUND_S = Number(process.env.BENCH_ROUND_SECONDS ?? 5);
const HALF_S = Number(process.env.BENCH_HALF_SECONDS ?? 10);
/**
 * oidc-provider writes no per-request log line, so the row compared with it runs Parley at `warn` (no access log);
 * a second Parley, measured in the same alternating rounds, runs with its default settings (`info`: one access-log
 * line per request) for the goal against the floor server.
 */
const PARLEY_LOG_LEVEL = process.env.BENCH_PARLEY_LOG_LEVEL ?? 'warn';
/** Goal: CPU per grant of Parley with its default settings, at most this many times the floor's. */
const DEFAULT_SETTINGS_CPU_GOAL = 1.25;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const BODY = 'grant_type=client_credentials&scope=connector%3Awrite';

function run(
  url: string,
  authorization: string,
  options: { duration: number; overallRate?: number },
): Promise<LoadResult> {
  return runLoad({
    url,
    method: 'POST',
    headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
    body: BODY,
    connections: CONNECTIONS,
    duration: options.duration,
    ...(options.overallRate ? { overallRate: options.overallRate } : {}),
  });
}

async function checkOneToken(url: string, authorization: string, name: string): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
    body: BODY,
  });
  const body = (await response.json()) as { access_token?: string; expires_in?: number };
  if (response.status !== 200 || body.access_token?.split('.').length !== 3 || body.expires_in !== 3600) {
    throw new Error(`${name} did not issue a JWT access token: ${response.status} ${JSON.stringify(body)}`);
  }
}

interface Target {
  name: string;
  url: string;
  authorization: string;
  pid: number;
}

/**
 * Peak throughput of both servers, measured in alternating rounds (parley, oidc-provider, parley, …) so that load
 * from other processes on the machine hits both alike. Grants/s = all requests / all seconds of a server's rounds;
 * p50/p99 = the median of its rounds' percentiles.
 */
async function measurePeaks(targets: Target[]): Promise<Map<string, Summary>> {
  for (const t of targets) await checkOneToken(t.url, t.authorization, t.name);
  for (const t of targets) await run(t.url, t.authorization, { duration: 2 }); // warm-up (JIT, caches)
  const rounds = new Map<string, LoadResult[]>(targets.map((t) => [t.name, []]));
  const cpu = new Map<string, number>(targets.map((t) => [t.name, 0]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets) {
      const cpuBefore = cpuMs(t.pid);
      const result = await run(t.url, t.authorization, { duration: ROUND_S });
      const cpuAfter = cpuMs(t.pid);
      if (cpuBefore !== undefined && cpuAfter !== undefined)
        cpu.set(t.name, cpu.get(t.name)! + cpuAfter - cpuBefore);
      assertClean(t.name, result);
      rounds.get(t.name)!.push(result);
      process.stdout.write(
        `  round ${round + 1}/${ROUNDS} ${t.name}: ${Math.round(result.requests.average)}/s\n`,
      );
    }
  }
  return new Map([...rounds].map(([name, results]) => [name, summarize(results, cpu.get(name)!)]));
}

interface Summary {
  rate: number;
  p50: number;
  p99: number;
  /** CPU µs the server process used per grant (NaN where /proc is missing). */
  cpuPerGrant: number;
}

function summarize(results: LoadResult[], cpuTotalMs: number): Summary {
  const total = results.reduce((sum, r) => sum + r.requests.total, 0);
  const seconds = results.reduce((sum, r) => sum + r.duration, 0);
  return {
    rate: total / seconds,
    p50: median(results.map((r) => r.latency.p50)),
    p99: median(results.map((r) => r.latency.p99)),
    cpuPerGrant: cpuTotalMs > 0 ? (cpuTotalMs * 1000) / total : Number.NaN,
  };
}

async function startParley(
  name: string,
  logLevel: string | undefined,
): Promise<{ target: Target; stop: () => Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-'));
  const port = await freePort();
  const env = parleyEnv(port, dataDir, {
    PARLEY_TOKENS_PER_MINUTE: String(1_000_000_000),
    ...(logLevel ? { LOG_LEVEL: logLevel } : {}),
  });
  // Default settings: no LOG_LEVEL at all (stdout is a pipe here, so the format is JSON, as in production).
  if (!logLevel) delete env.LOG_LEVEL;
  const { client } = await createBenchClient({ ...env, LOG_LEVEL: 'error' });
  const child = await startParleyProcess(env, port);
  return {
    target: {
      name,
      pid: child.pid!,
      url: `http://127.0.0.1:${port}/platform/v1/auth/token/client-credentials`,
      authorization: basicAuth(client.client_id!, client.client_secret!),
    },
    stop: async () => {
      await stop(child);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A comparison server from `bench/oauth/<script>` in its own process, with one client. */
async function startScriptServer(
  name: string,
  script: string,
  paths: { ready: string; token: string },
): Promise<{ target: Target; stop: () => Promise<void> }> {
  const port = await freePort();
  const clientId = 'bench-client';
  const clientSecret = 'bench-secret-0123456789abcdefghijklmnopqrstuvwxyz';
  const child = spawn(process.execPath, [join(root, 'bench/oauth', script)], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      BENCH_CLIENT_ID: clientId,
      BENCH_CLIENT_SECRET: clientSecret,
      NODE_ENV: 'production',
    },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  await waitForUp(child, `http://127.0.0.1:${port}${paths.ready}`);
  return {
    target: {
      name,
      pid: child.pid!,
      url: `http://127.0.0.1:${port}${paths.token}`,
      authorization: basicAuth(clientId, clientSecret),
    },
    stop: () => stop(child),
  };
}

// Every server started is stopped again, also when a later one fails to start (no orphaned child processes).
const started: Array<{ target: Target; stop: () => Promise<void> }> = [];
let peaks: Map<string, Summary>;
let half: LoadResult;
try {
  const parley = await startParley('parley', PARLEY_LOG_LEVEL);
  started.push(parley);
  started.push(await startParley('parley-default', undefined));
  started.push(
    await startScriptServer('oidc-provider', 'oidc-provider-server.mjs', { ready: '/jwks', token: '/token' }),
  );
  started.push(await startScriptServer('floor', 'token-floor-server.mjs', { ready: '/', token: '/token' }));
  console.log(
    `peak: ${ROUNDS} alternating rounds of ${ROUND_S} s per server, ${CONNECTIONS} keep-alive connections`,
  );
  peaks = await measurePeaks(started.map((s) => s.target));
  const rate = Math.max(1, Math.floor(peaks.get('parley')!.rate / 2));
  console.log(`parley at half its peak: ${rate}/s for ${HALF_S} s`);
  half = await run(parley.target.url, parley.target.authorization, { duration: HALF_S, overallRate: rate });
  assertClean('parley', half);
} finally {
  for (const server of started) await server.stop();
}
const ours = peaks.get('parley')!;
const theirs = peaks.get('oidc-provider')!;
const bare = peaks.get('floor')!;
const defaults = peaks.get('parley-default')!;
const defaultCpuRatio = defaults.cpuPerGrant / bare.cpuPerGrant;
const ratio = ours.rate / theirs.rate;
const halfP99 = half.latency.p99;
const oidcVersion = (await import('oidc-provider/package.json', { with: { type: 'json' } })).default.version;

const cpuRatio = theirs.cpuPerGrant / ours.cpuPerGrant;
const us = (n: number) => (Number.isNaN(n) ? '      n/a' : fmt(n, 0));

console.log('\nPOST token endpoint, client_credentials, HTTP Basic, ES256 JWT access token (1 h)');
console.log(`parley: SQLite (WAL), audit event per grant, rate limiter on, LOG_LEVEL=${PARLEY_LOG_LEVEL}`);
console.log('| server                                  |  grants/s |  p50 (ms) |  p99 (ms) | CPU µs/grant |');
console.log('|-----------------------------------------|-----------|-----------|-----------|--------------|');
console.log(
  `| parley (SQLite + audit, own process)    | ${fmt(ours.rate, 0)} | ${fmt(ours.p50)} | ${fmt(ours.p99)} |    ${us(ours.cpuPerGrant)} |`,
);
console.log(
  `| oidc-provider ${oidcVersion.padEnd(7)} (memory adapter)   | ${fmt(theirs.rate, 0)} | ${fmt(theirs.p50)} | ${fmt(theirs.p99)} |    ${us(theirs.cpuPerGrant)} |`,
);
console.log(
  `| parley, default settings (info logs)    | ${fmt(defaults.rate, 0)} | ${fmt(defaults.p50)} | ${fmt(defaults.p99)} |    ${us(defaults.cpuPerGrant)} |`,
);
console.log(
  `| floor: raw node:http, essential work    | ${fmt(bare.rate, 0)} | ${fmt(bare.p50)} | ${fmt(bare.p99)} |    ${us(bare.cpuPerGrant)} |`,
);
console.log(
  `| parley at half peak (${String(Math.floor(ours.rate / 2)).padStart(5)}/s offered)    | ${fmt(half.requests.average, 0)} | ${fmt(half.latency.p50)} | ${fmt(halfP99)} |              |`,
);
console.log(
  `\nparley / oidc-provider grants/s: ${ratio.toFixed(2)}x   goal >= 3x   ${ratio >= 3 ? 'MET' : 'MISSED'}`,
);
if (!Number.isNaN(defaultCpuRatio))
  console.log(
    `parley (default settings) / floor CPU per grant: ${defaultCpuRatio.toFixed(2)}x   goal <= ${DEFAULT_SETTINGS_CPU_GOAL}x   ${defaultCpuRatio <= DEFAULT_SETTINGS_CPU_GOAL ? 'MET' : 'MISSED'}`,
  );
console.log(`parley p99 at half peak: ${halfP99} ms   goal < 20 ms   ${halfP99 < 20 ? 'MET' : 'MISSED'}`);
if (!Number.isNaN(cpuRatio))
  console.log(`oidc-provider / parley CPU per grant: ${cpuRatio.toFixed(2)}x (grants per CPU-second)`);
console.log(
  `floor / oidc-provider grants/s: ${(bare.rate / theirs.rate).toFixed(2)}x (the essential work alone, in Node, on this machine); parley reaches ${((100 * ours.rate) / bare.rate).toFixed(0)} % of the floor`,
);
const { cpus, loadavg } = await import('node:os');
console.log(
  `machine: ${cpus().length} CPUs, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} (other work on the machine inflates latency)`,
);
