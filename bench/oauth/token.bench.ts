// Token endpoint throughput: Parley (SQLite storage + audit, its default embedded setup) against panva's
// oidc-provider v9 (client credentials, RFC 9068 JWT access tokens, ES256, in-memory storage), in the same run on
// the same machine, each server in its own child process, driven over keep-alive HTTP by autocannon from this
// process. Prints grants/s and p50/p99 for both, and Parley's p99 at half of its measured peak rate.
//
// Goals (printed beside the figures): ≥ 3 × oidc-provider's grants/s, and p99 < 20 ms at half of Parley's peak.
// Parley's per-client token quota is lifted for the run (PARLEY_TOKENS_PER_MINUTE) — the limiter still runs on
// every request, only its limit is out of reach of one client hammering the endpoint.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
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
const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
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

function run(url: string, authorization: string, options: { duration: number; overallRate?: number }): Promise<AutocannonResult> {
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

interface Measured {
  peak: AutocannonResult;
  half?: AutocannonResult;
}

async function measure(name: string, url: string, authorization: string, withHalf: boolean): Promise<Measured> {
  await checkOneToken(url, authorization, name);
  process.stdout.write(`${name}: warming up… `);
  await run(url, authorization, { duration: 3 });
  process.stdout.write(`peak (${DURATION_S} s, ${CONNECTIONS} connections)… `);
  const peak = await run(url, authorization, { duration: DURATION_S });
  let half: AutocannonResult | undefined;
  if (withHalf) {
    const rate = Math.max(1, Math.floor(peak.requests.average / 2));
    process.stdout.write(`half peak (${rate}/s)… `);
    half = await run(url, authorization, { duration: DURATION_S, overallRate: rate });
  }
  console.log('done');
  for (const r of [peak, half].filter(Boolean) as AutocannonResult[]) {
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${name}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  }
  return { peak, half };
}

async function benchParley(): Promise<Measured> {
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
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  };
  const out: string[] = [];
  const capture = (line: string) => out.push(line);
  await runCli(['companies', 'create', '--name', 'Bench', '--json'], capture, { env });
  const company = JSON.parse(out.pop()!);
  await runCli(
    ['api-clients', 'create', '--company', company.id, '--name', 'bench', '--scopes', 'connector:write connector:read', '--json'],
    capture,
    { env },
  );
  const client = JSON.parse(out.pop()!);
  const child = spawn(process.execPath, [join(root, 'packages/server/bin/parley.js'), 'serve'], {
    cwd: root,
    env: { ...env, NODE_ENV: 'production' },
    // The server's JSON log (two lines per request at the default level) goes nowhere, as to a log shipper.
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await waitUntilUp(`http://127.0.0.1:${port}/readyz`, child);
    const authorization = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
    return await measure('parley', `http://127.0.0.1:${port}/platform/v1/auth/token/client-credentials`, authorization, true);
  } finally {
    await stop(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function benchOidcProvider(): Promise<Measured> {
  const port = await freePort();
  const clientId = 'bench-client';
  const clientSecret = 'bench-secret-0123456789abcdefghijklmnopqrstuvwxyz';
  const child = spawn(process.execPath, [join(root, 'bench/oauth/oidc-provider-server.mjs')], {
    cwd: root,
    env: { ...process.env, PORT: String(port), BENCH_CLIENT_ID: clientId, BENCH_CLIENT_SECRET: clientSecret, NODE_ENV: 'production' },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  try {
    await waitUntilUp(`http://127.0.0.1:${port}/jwks`, child);
    const authorization = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
    return await measure('oidc-provider', `http://127.0.0.1:${port}/token`, authorization, false);
  } finally {
    await stop(child);
  }
}

const fmt = (n: number, digits = 1) => n.toFixed(digits).padStart(9);

const parley = await benchParley();
const oidc = await benchOidcProvider();
const ratio = parley.peak.requests.average / oidc.peak.requests.average;
const halfP99 = parley.half!.latency.p99;
const oidcVersion = (await import('oidc-provider/package.json', { with: { type: 'json' } })).default.version;

console.log(`\nPOST token, client_credentials, Basic auth, ES256 JWT; ${CONNECTIONS} keep-alive connections, ${DURATION_S} s each`);
console.log('| server                                 |  grants/s |  p50 (ms) |  p99 (ms) |');
console.log('|----------------------------------------|-----------|-----------|-----------|');
console.log(
  `| parley (SQLite + audit, own process)   | ${fmt(parley.peak.requests.average, 0)} | ${fmt(parley.peak.latency.p50)} | ${fmt(parley.peak.latency.p99)} |`,
);
console.log(
  `| oidc-provider ${oidcVersion.padEnd(7)} (memory adapter)  | ${fmt(oidc.peak.requests.average, 0)} | ${fmt(oidc.peak.latency.p50)} | ${fmt(oidc.peak.latency.p99)} |`,
);
console.log(
  `| parley at half peak (${String(Math.floor(parley.peak.requests.average / 2)).padStart(5)}/s target)    | ${fmt(parley.half!.requests.average, 0)} | ${fmt(parley.half!.latency.p50)} | ${fmt(halfP99)} |`,
);
console.log(`\nparley / oidc-provider grants/s: ${ratio.toFixed(2)}×   goal ≥ 3×   ${ratio >= 3 ? 'MET' : 'MISSED'}`);
console.log(`parley p99 at half peak: ${halfP99} ms   goal < 20 ms   ${halfP99 < 20 ? 'MET' : 'MISSED'}`);
