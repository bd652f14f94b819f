// Token endpoint throughput: Parley (SQLite storage + audit, its default embedded setup) against panva's
// oidc-provider v9 (client credentials, RFC 9068 JWT access tokens, ES256, in-memory storage), in the same run on
// the same machine, each server in its own child process, driven over keep-alive HTTP by autocannon from this
// process. Prints grants/s and p50/p99 for both, and Parley's p99 at half of its measured peak rate.
//
// Goals (printed beside the figures): ≥ 3 × oidc-provider's grants/s, and p99 < 20 ms at half of Parley's peak.
// Parley's per-client token quota is lifted for the run (PARLEY_TOKENS_PER_MINUTE) — the limiter still runs on
// every request, only its limit is out of reach of one client hammering the endpoint.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
// @ts-expect-error autocannon ships no type declarations.
import autocannon from 'autocannon';
import { runCli } from '../../packages/server/src/cli/main.ts';

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
}

const root = new URL('../../', import.meta.url).pathname;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const ROUND_S = Number(process.env.BENCH_ROUND_SECONDS ?? 5);
const HALF_S = Number(process.env.BENCH_HALF_SECONDS ?? 10);
/**
 * oidc-provider writes no per-request log line, so Parley runs at `warn` (no access log) for a like-for-like
 * comparison; set BENCH_PARLEY_LOG_LEVEL=info to include its two JSON access-log lines per request.
 */
const PARLEY_LOG_LEVEL = process.env.BENCH_PARLEY_LOG_LEVEL ?? 'warn';
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const BODY = 'grant_type=client_credentials&scope=connector%3Awrite';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

async function waitUntilUp(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${url} did not come up`);
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(10_000).then(() => child.kill('SIGKILL'))]);
}

function run(
  url: string,
  authorization: string,
  options: { duration: number; overallRate?: number },
): Promise<AutocannonResult> {
  return autocannon({
    url,
    method: 'POST',
    headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
    body: BODY,
    connections: CONNECTIONS,
    pipelining: 1,
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
 * CPU time (user + system, all threads) a process has used, in ms, from /proc (Linux); undefined elsewhere. On a
 * machine shared with other work, CPU per grant is the figure contention distorts least.
 */
function cpuMs(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

/**
 * Peak throughput of both servers, measured in alternating rounds (parley, oidc-provider, parley, …) so that load
 * from other processes on the machine hits both alike. Grants/s = all requests / all seconds of a server's rounds;
 * p50/p99 = the median of its rounds' percentiles.
 */
async function measurePeaks(targets: Target[]): Promise<Map<string, Summary>> {
  for (const t of targets) await checkOneToken(t.url, t.authorization, t.name);
  for (const t of targets) await run(t.url, t.authorization, { duration: 2 }); // warm-up (JIT, caches)
  const rounds = new Map<string, AutocannonResult[]>(targets.map((t) => [t.name, []]));
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

function summarize(results: AutocannonResult[], cpuTotalMs: number): Summary {
  const total = results.reduce((sum, r) => sum + r.requests.total, 0);
  const seconds = results.reduce((sum, r) => sum + r.duration, 0);
  return {
    rate: total / seconds,
    p50: median(results.map((r) => r.latency.p50)),
    p99: median(results.map((r) => r.latency.p99)),
    cpuPerGrant: cpuTotalMs > 0 ? (cpuTotalMs * 1000) / total : Number.NaN,
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function assertClean(name: string, r: AutocannonResult): void {
  if (r.non2xx > 0 || r.errors > 0)
    throw new Error(`${name}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
}

async function startParley(): Promise<{ target: Target; stop: () => Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-'));
  const port = await freePort();
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    PARLEY_DATA_DIR: dataDir,
    PARLEY_PUBLIC_URL: `http://127.0.0.1:${port}`,
    PARLEY_TOKENS_PER_MINUTE: String(1_000_000_000),
    DATABASE_URL: undefined,
    REDIS_URL: undefined,
    LOG_LEVEL: PARLEY_LOG_LEVEL,
  };
  const out: string[] = [];
  const capture = (line: string) => out.push(line);
  await runCli(['companies', 'create', '--name', 'Bench', '--json'], capture, {
    env: { ...env, LOG_LEVEL: 'error' },
  });
  const company = JSON.parse(out.pop()!);
  await runCli(
    [
      'api-clients',
      'create',
      '--company',
      company.id,
      '--name',
      'bench',
      '--scopes',
      'connector:write connector:read',
      '--json',
    ],
    capture,
    { env: { ...env, LOG_LEVEL: 'error' } },
  );
  const client = JSON.parse(out.pop()!);
  const child = spawn(process.execPath, [join(root, 'packages/server/bin/parley.js'), 'serve'], {
    cwd: root,
    env: { ...env, NODE_ENV: 'production' },
    // The server's JSON log goes nowhere, as to a log shipper.
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitUntilUp(`http://127.0.0.1:${port}/readyz`, child);
  return {
    target: {
      name: 'parley',
      pid: child.pid!,
      url: `http://127.0.0.1:${port}/platform/v1/auth/token/client-credentials`,
      authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
    },
    stop: async () => {
      await stop(child);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function startOidcProvider(): Promise<{ target: Target; stop: () => Promise<void> }> {
  const port = await freePort();
  const clientId = 'bench-client';
  const clientSecret = 'bench-secret-0123456789abcdefghijklmnopqrstuvwxyz';
  const child = spawn(process.execPath, [join(root, 'bench/oauth/oidc-provider-server.mjs')], {
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
  await waitUntilUp(`http://127.0.0.1:${port}/jwks`, child);
  return {
    target: {
      name: 'oidc-provider',
      pid: child.pid!,
      url: `http://127.0.0.1:${port}/token`,
      authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
    },
    stop: () => stop(child),
  };
}

const fmt = (n: number, digits = 1) => n.toFixed(digits).padStart(9);

const parley = await startParley();
const oidc = await startOidcProvider();
let peaks: Map<string, Summary>;
let half: AutocannonResult;
try {
  console.log(
    `peak: ${ROUNDS} alternating rounds of ${ROUND_S} s per server, ${CONNECTIONS} keep-alive connections`,
  );
  peaks = await measurePeaks([parley.target, oidc.target]);
  const rate = Math.max(1, Math.floor(peaks.get('parley')!.rate / 2));
  console.log(`parley at half its peak: ${rate}/s for ${HALF_S} s`);
  half = await run(parley.target.url, parley.target.authorization, { duration: HALF_S, overallRate: rate });
  assertClean('parley', half);
} finally {
  await parley.stop();
  await oidc.stop();
}
const ours = peaks.get('parley')!;
const theirs = peaks.get('oidc-provider')!;
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
  `| parley at half peak (${String(Math.floor(ours.rate / 2)).padStart(5)}/s offered)    | ${fmt(half.requests.average, 0)} | ${fmt(half.latency.p50)} | ${fmt(halfP99)} |              |`,
);
console.log(
  `\nparley / oidc-provider grants/s: ${ratio.toFixed(2)}x   goal >= 3x   ${ratio >= 3 ? 'MET' : 'MISSED'}`,
);
console.log(`parley p99 at half peak: ${halfP99} ms   goal < 20 ms   ${halfP99 < 20 ? 'MET' : 'MISSED'}`);
if (!Number.isNaN(cpuRatio))
  console.log(`oidc-provider / parley CPU per grant: ${cpuRatio.toFixed(2)}x (grants per CPU-second)`);
const { cpus, loadavg } = await import('node:os');
console.log(
  `machine: ${cpus().length} CPUs, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} (other work on the machine inflates latency)`,
);
