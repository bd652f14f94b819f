// Connector key rotation throughput and latency: a real Parley server (SQLite, its default embedded setup) in a child
// process, real access tokens from its token endpoint, driven over keep-alive HTTP by autocannon from this process.
//
// Scenarios (each request carries a new, distinct key, so every one is a real rotation: seal + fingerprint +
// conditional update + audit event in one transaction):
//   1. one connector  — every rotation contends for the same row (the serialised worst case);
//   2. many connectors — rotations spread over BENCH_CONNECTORS connectors;
//   3. check          — POST …/check: read + open the current key, GET a local HTTP server, report (outbound path).
// After each rotation scenario the final key_version is compared with the number of 2xx answers (no lost update).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
// @ts-expect-error autocannon ships no type declarations.
import autocannon from 'autocannon';
import { runCli } from '../../packages/server/src/cli/main.ts';

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number; max: number };
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

const root = new URL('../../', import.meta.url).pathname;
const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const CONNECTORS = Number(process.env.BENCH_CONNECTORS ?? 64);

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

/** A tiny always-200 HTTP server standing in for an integration (for the check scenario). */
async function startIntegration(): Promise<{ url: string; close(): void }> {
  const server = createHttpServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/hook`, close: () => server.close() };
}

let keyCounter = 0;
const nextKey = () => `sk-bench-${++keyCounter}-${randomBytes(8).toString('hex')}`;

function rotations(
  baseUrl: string,
  token: string,
  connectorIds: string[],
  duration: number,
): Promise<AutocannonResult> {
  let n = 0;
  return autocannon({
    url: baseUrl,
    connections: CONNECTIONS,
    pipelining: 1,
    duration,
    requests: [
      {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        setupRequest: (request: Record<string, unknown>) => ({
          ...request,
          path: `/integrations/v1/connectors/api-keys/${connectorIds[n++ % connectorIds.length]}`,
          body: JSON.stringify({ api_key: nextKey() }),
        }),
      },
    ],
  });
}

function checks(
  baseUrl: string,
  token: string,
  connectorId: string,
  duration: number,
): Promise<AutocannonResult> {
  return autocannon({
    url: `${baseUrl}/integrations/v1/connectors/${connectorId}/check`,
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    connections: CONNECTIONS,
    pipelining: 1,
    duration,
  });
}

async function totalVersions(baseUrl: string, token: string, ids: string[]): Promise<number> {
  const res = await fetch(`${baseUrl}/integrations/v1/connectors`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const body = (await res.json()) as { connectors: Array<{ id: string; key_version: number }> };
  return body.connectors.filter((c) => ids.includes(c.id)).reduce((n, c) => n + c.key_version, 0);
}

function assertClean(name: string, r: AutocannonResult): void {
  if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0) {
    throw new Error(`${name}: ${r.non2xx} non-2xx answers, ${r.errors} errors, ${r.timeouts} timeouts`);
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-'));
const port = await freePort();
const integration = await startIntegration();
const env: Record<string, string | undefined> = {
  ...process.env,
  PORT: String(port),
  HOST: '127.0.0.1',
  PARLEY_DATA_DIR: dataDir,
  PARLEY_PUBLIC_URL: `http://127.0.0.1:${port}`,
  DATABASE_URL: undefined,
  REDIS_URL: undefined,
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
};
const out: string[] = [];
const cli = async (args: string[]) => {
  const code = await runCli([...args, '--json'], (line) => out.push(line), { env });
  if (code !== 0) throw new Error(`parley ${args.join(' ')} failed: ${out.pop()}`);
  return JSON.parse(out.pop()!);
};
const company = await cli(['companies', 'create', '--name', 'Bench']);
const client = await cli([
  'api-clients',
  'create',
  '--company',
  company.id,
  '--name',
  'bench',
  '--scopes',
  'connector:write connector:read',
]);
const ids: string[] = [];
for (let i = 0; i < CONNECTORS; i++) {
  const c = await cli([
    'connectors',
    'create',
    '--company',
    company.id,
    '--name',
    `c${i}`,
    '--type',
    'webhook',
    '--url',
    integration.url,
    '--api-key',
    nextKey(),
  ]);
  ids.push(c.id);
}

const child = spawn(process.execPath, [join(root, 'packages/server/bin/parley.js'), 'serve'], {
  cwd: root,
  env: { ...env, NODE_ENV: 'production' },
  // The server's JSON log goes nowhere, as to a log shipper.
  stdio: ['ignore', 'ignore', 'inherit'],
});
try {
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitUntilUp(`${baseUrl}/readyz`, child);
  const tokenResponse = await fetch(`${baseUrl}/platform/v1/auth/token/client-credentials`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  const token = ((await tokenResponse.json()) as { access_token: string }).access_token;
  if (!token) throw new Error(`no token: ${tokenResponse.status}`);

  process.stdout.write('warming up… ');
  await rotations(baseUrl, token, ids, 2);

  const results: Array<[string, AutocannonResult]> = [];
  for (const [name, targets] of [
    ['PUT api-key, one connector', ids.slice(0, 1)],
    [`PUT api-key, ${CONNECTORS} connectors`, ids],
  ] as const) {
    process.stdout.write(`${name} (${DURATION_S} s)… `);
    const before = await totalVersions(baseUrl, token, [...targets]);
    const r = await rotations(baseUrl, token, [...targets], DURATION_S);
    assertClean(name, r);
    const gained = (await totalVersions(baseUrl, token, [...targets])) - before;
    // autocannon stops with up to one request per connection in flight: those were served but not counted.
    if (gained < r['2xx'] || gained > r['2xx'] + CONNECTIONS) {
      throw new Error(`${name}: ${r['2xx']} rotations answered 200 but versions grew by ${gained}`);
    }
    results.push([name, r]);
  }
  process.stdout.write(`POST check (${DURATION_S} s)… `);
  const c = await checks(baseUrl, token, ids[0]!, DURATION_S);
  assertClean('check', c);
  results.push(['POST check (outbound GET, local server)', c]);
  console.log('done');

  const fmt = (n: number, digits = 1) => n.toFixed(digits).padStart(9);
  console.log(
    `\nParley on SQLite (own process), ${CONNECTIONS} keep-alive connections, ${DURATION_S} s each, real bearer tokens`,
  );
  console.log(
    '| scenario                                  |     req/s |  p50 (ms) |  p99 (ms) |  max (ms) |  total |',
  );
  console.log(
    '|-------------------------------------------|-----------|-----------|-----------|-----------|--------|',
  );
  for (const [name, r] of results) {
    console.log(
      `| ${name.padEnd(41)} | ${fmt(r.requests.average, 0)} | ${fmt(r.latency.p50)} | ${fmt(r.latency.p99)} | ${fmt(r.latency.max)} | ${String(r['2xx']).padStart(6)} |`,
    );
  }
  console.log(
    '\nevery rotation answered 200; key_version grew by exactly the number of rotations served (no lost update)',
  );
} finally {
  await stop(child);
  integration.close();
  rmSync(dataDir, { recursive: true, force: true });
}
