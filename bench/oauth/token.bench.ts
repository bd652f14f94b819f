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
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@parley/testing/process';
import { type LoadResult, runLoad } from '../lib/http-load.ts';
import {
  assertClean,
  type BenchEnv,
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
/**
 * Another checkout of Parley (e.g. `git archive main` unpacked beside its node_modules) to measure before and after
 * a change in the same alternating rounds: its default-settings rows (secret, private_key_jwt, DPoP) are added,
 * marked `@compare`. Unset: no extra rows.
 */
const COMPARE_ROOT = process.env.BENCH_COMPARE_ROOT;
/** Seconds over which each server's idle CPU is measured (subtracted in the marginal CPU per grant). */
const IDLE_S = Number(process.env.BENCH_IDLE_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const BODY = 'grant_type=client_credentials&scope=connector%3Awrite';
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

function run(
  url: string,
  authorization: string | undefined,
  options: Pick<Target, 'nextBody' | 'nextHeaders'> & { duration: number; overallRate?: number },
): Promise<LoadResult> {
  return runLoad({
    url,
    method: 'POST',
    headers: {
      ...(authorization ? { authorization } : {}),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: BODY,
    ...(options.nextBody ? { nextBody: options.nextBody } : {}),
    ...(options.nextHeaders ? { nextHeaders: options.nextHeaders } : {}),
    connections: CONNECTIONS,
    duration: options.duration,
    ...(options.overallRate ? { overallRate: options.overallRate } : {}),
  });
}

async function checkOneToken(target: Target): Promise<void> {
  const { url, authorization, name } = target;
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      ...(authorization ? { authorization } : {}),
      'content-type': 'application/x-www-form-urlencoded',
      ...target.nextHeaders?.(),
    },
    body: target.nextBody?.() ?? BODY,
  });
  const body = (await response.json()) as { access_token?: string; expires_in?: number };
  if (response.status !== 200 || body.access_token?.split('.').length !== 3 || body.expires_in !== 3600) {
    throw new Error(`${name} did not issue a JWT access token: ${response.status} ${JSON.stringify(body)}`);
  }
}

interface Target {
  name: string;
  url: string;
  /** HTTP Basic credentials; absent when the client authenticates in the body (private_key_jwt). */
  authorization?: string;
  /** A fresh form body per request (a client assertion is single-use); absent: the fixed BODY. */
  nextBody?: () => string;
  /** Fresh headers per request (a DPoP proof is single-use); absent: none. */
  nextHeaders?: () => Record<string, string>;
  pid: number;
}

/**
 * Peak throughput of both servers, measured in alternating rounds (parley, oidc-provider, parley, …) so that load
 * from other processes on the machine hits both alike. Grants/s = all requests / all seconds of a server's rounds;
 * p50/p99 = the median of its rounds' percentiles.
 */
async function measurePeaks(targets: Target[]): Promise<Map<string, Summary>> {
  for (const t of targets) await checkOneToken(t);
  const load = (t: Target, duration: number) =>
    run(t.url, t.authorization, { duration, nextBody: t.nextBody, nextHeaders: t.nextHeaders });
  for (const t of targets) await load(t, 2); // warm-up (JIT, caches)
  // The CPU each server uses while idle (timers, polling), measured over one window for all at once: on a loaded
  // machine grants are few, and this background work would otherwise be charged to them.
  const idleBefore = new Map(targets.map((t) => [t.name, cpuMs(t.pid)]));
  const idleStart = Date.now();
  await new Promise((resolve) => setTimeout(resolve, IDLE_S * 1000));
  const idleSeconds = (Date.now() - idleStart) / 1000;
  const idlePerSecond = new Map(
    targets.map((t) => {
      const before = idleBefore.get(t.name);
      const after = cpuMs(t.pid);
      return [t.name, before === undefined || after === undefined ? 0 : (after - before) / idleSeconds];
    }),
  );
  const rounds = new Map<string, LoadResult[]>(targets.map((t) => [t.name, []]));
  const cpu = new Map<string, number>(targets.map((t) => [t.name, 0]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets) {
      const cpuBefore = cpuMs(t.pid);
      const result = await load(t, ROUND_S);
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
  return new Map(
    [...rounds].map(([name, results]) => [
      name,
      summarize(results, cpu.get(name)!, idlePerSecond.get(name) ?? 0),
    ]),
  );
}

interface Summary {
  rate: number;
  p50: number;
  p99: number;
  /** CPU µs the server process used per grant (NaN where /proc is missing). */
  cpuPerGrant: number;
  /** The same less what the process uses while idle (its timers and polling) over the rounds' seconds. */
  marginalCpuPerGrant: number;
}

function summarize(results: LoadResult[], cpuTotalMs: number, idleMsPerSecond: number): Summary {
  const total = results.reduce((sum, r) => sum + r.requests.total, 0);
  const seconds = results.reduce((sum, r) => sum + r.duration, 0);
  return {
    rate: total / seconds,
    p50: median(results.map((r) => r.latency.p50)),
    p99: median(results.map((r) => r.latency.p99)),
    cpuPerGrant: cpuTotalMs > 0 ? (cpuTotalMs * 1000) / total : Number.NaN,
    marginalCpuPerGrant:
      cpuTotalMs > 0 ? ((cpuTotalMs - idleMsPerSecond * seconds) * 1000) / total : Number.NaN,
  };
}

async function startParley(
  name: string,
  logLevel: string | undefined,
  auth: 'client_secret' | 'private_key_jwt' | 'dpop' = 'client_secret',
  root?: string,
): Promise<{ target: Target; stop: () => Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-'));
  const port = await freePort();
  const env = parleyEnv(port, dataDir, {
    PARLEY_TOKENS_PER_MINUTE: String(1_000_000_000),
    ...(logLevel ? { LOG_LEVEL: logLevel } : {}),
  });
  // Default settings: no LOG_LEVEL at all (stdout is a pipe here, so the format is JSON, as in production).
  if (!logLevel) delete env.LOG_LEVEL;
  const url = `http://127.0.0.1:${port}/platform/v1/auth/token/client-credentials`;
  const cliEnv = { ...env, LOG_LEVEL: 'error' };
  const credentials =
    auth === 'client_secret'
      ? await secretCredentials(cliEnv)
      : auth === 'dpop'
        ? await dpopCredentials(cliEnv, url)
        : await assertionCredentials(cliEnv, dataDir, url);
  const child = await startParleyProcess(env, port, root);
  return {
    target: { name, pid: child.pid!, url, ...credentials },
    stop: async () => {
      await stop(child);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function secretCredentials(env: BenchEnv): Promise<Pick<Target, 'authorization'>> {
  const { client } = await createBenchClient(env);
  return { authorization: basicAuth(client.client_id!, client.client_secret!) };
}

/**
 * A private_key_jwt client (RFC 7523 §2.2) with an ES256 key, and a fresh assertion per request (`jti` is
 * single-use), signed in this process: its CPU is the generator's, not the server's.
 */
async function assertionCredentials(
  env: BenchEnv,
  dataDir: string,
  audience: string,
): Promise<Pick<Target, 'nextBody'>> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwksFile = join(dataDir, 'bench-client-jwks.json');
  writeFileSync(
    jwksFile,
    JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'bench' }] }),
  );
  const { client } = await createBenchClient(env, 'bench-signer', [
    '--auth-method',
    'private_key_jwt',
    '--jwks-file',
    jwksFile,
  ]);
  const clientId = client.client_id!;
  const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid: 'bench' })).toString(
    'base64url',
  );
  const assertion = () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: clientId,
      sub: clientId,
      aud: audience,
      iat: now,
      exp: now + 60,
      jti: randomUUID(),
    };
    const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    const signature = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
    return `${input}.${signature.toString('base64url')}`;
  };
  return {
    nextBody: () =>
      `${BODY}&client_assertion_type=${encodeURIComponent(ASSERTION_TYPE)}&client_assertion=${assertion()}`,
  };
}

/**
 * A client whose tokens must be DPoP-bound (RFC 9449, `--dpop required`), authenticating with its secret, and a
 * fresh ES256 proof per request (`jti` is single-use), signed in this process: its CPU is the generator's.
 */
async function dpopCredentials(
  env: BenchEnv,
  tokenUrl: string,
): Promise<Pick<Target, 'authorization' | 'nextHeaders'>> {
  const { client } = await createBenchClient(env, 'bench-dpop', ['--dpop', 'required']);
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const header = Buffer.from(JSON.stringify({ typ: 'dpop+jwt', alg: 'ES256', jwk })).toString('base64url');
  const proof = () => {
    const claims = { jti: randomUUID(), htm: 'POST', htu: tokenUrl, iat: Math.floor(Date.now() / 1000) };
    const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    const signature = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
    return `${input}.${signature.toString('base64url')}`;
  };
  return {
    authorization: basicAuth(client.client_id!, client.client_secret!),
    nextHeaders: () => ({ dpop: proof() }),
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
  started.push(await startParley('parley-default-pkjwt', undefined, 'private_key_jwt'));
  started.push(await startParley('parley-default-dpop', undefined, 'dpop'));
  if (COMPARE_ROOT) {
    started.push(await startParley('compare-default', undefined, 'client_secret', COMPARE_ROOT));
    started.push(await startParley('compare-default-pkjwt', undefined, 'private_key_jwt', COMPARE_ROOT));
    started.push(await startParley('compare-default-dpop', undefined, 'dpop', COMPARE_ROOT));
  }
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
const assertions = peaks.get('parley-default-pkjwt')!;
const bound = peaks.get('parley-default-dpop')!;
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
  `| parley, default, private_key_jwt (ES256)| ${fmt(assertions.rate, 0)} | ${fmt(assertions.p50)} | ${fmt(assertions.p99)} |    ${us(assertions.cpuPerGrant)} |`,
);
console.log(
  `| parley, default, secret + DPoP (ES256)  | ${fmt(bound.rate, 0)} | ${fmt(bound.p50)} | ${fmt(bound.p99)} |    ${us(bound.cpuPerGrant)} |`,
);
console.log(
  `| floor: raw node:http, essential work    | ${fmt(bare.rate, 0)} | ${fmt(bare.p50)} | ${fmt(bare.p99)} |    ${us(bare.cpuPerGrant)} |`,
);
for (const [name, label] of [
  ['compare-default', 'default settings'],
  ['compare-default-pkjwt', 'default, private_key_jwt'],
  ['compare-default-dpop', 'default, secret + DPoP'],
] as const) {
  const row = peaks.get(name);
  if (!row) continue;
  console.log(
    `| @compare ${label.padEnd(31)}| ${fmt(row.rate, 0)} | ${fmt(row.p50)} | ${fmt(row.p99)} |    ${us(row.cpuPerGrant)} |`,
  );
}
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
if (!Number.isNaN(assertions.cpuPerGrant))
  console.log(
    `parley private_key_jwt (default settings) / floor CPU per grant: ${(assertions.cpuPerGrant / bare.cpuPerGrant).toFixed(2)}x (the floor authenticates with a secret; an assertion adds an ES256 verification and a jti insert)`,
  );
if (!Number.isNaN(bound.cpuPerGrant))
  console.log(
    `parley DPoP-bound (default settings) / floor CPU per grant: ${(bound.cpuPerGrant / bare.cpuPerGrant).toFixed(2)}x (a proof adds an ES256 verification, a JWK thumbprint and a jti insert)`,
  );
for (const [name, mine] of [
  ['compare-default', defaults],
  ['compare-default-pkjwt', assertions],
  ['compare-default-dpop', bound],
] as const) {
  const row = peaks.get(name);
  if (row && !Number.isNaN(row.cpuPerGrant))
    console.log(
      `${name} (${COMPARE_ROOT}) / floor CPU per grant: ${(row.cpuPerGrant / bare.cpuPerGrant).toFixed(2)}x; this checkout: ${(mine.cpuPerGrant / bare.cpuPerGrant).toFixed(2)}x`,
    );
}
console.log(
  "\nCPU per grant less each idle process's own background CPU (what a grant adds; on a loaded machine grants are few):",
);
for (const [name, row] of peaks) {
  console.log(
    `  ${name.padEnd(22)} ${us(row.marginalCpuPerGrant)} µs   ${(row.marginalCpuPerGrant / bare.marginalCpuPerGrant).toFixed(2)}x the floor`,
  );
}
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
