// Connector key rotation throughput and latency: a real Parley server (SQLite, its default embedded setup) in a child
// process, real access tokens from its token endpoint, driven over keep-alive HTTP by autocannon from this process.
//
// Scenarios (each request carries a new, distinct key, so every one is a real rotation: seal + fingerprint +
// conditional update + audit event in one transaction):
//   1. one connector  — every rotation contends for the same row (the serialised worst case);
//   2. many connectors — rotations spread over BENCH_CONNECTORS connectors;
//   3. check          — POST …/check: read + open the current key, GET a local HTTP server, report (outbound path).
// After each rotation scenario the final key_version is compared with the number of 2xx answers (no lost update).
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@parley/testing/process';
// @ts-expect-error autocannon ships no type declarations.
import autocannon from 'autocannon';
import {
  type AutocannonResult,
  assertClean,
  basicAuth,
  createBenchClient,
  fmt,
  parleyCli,
  parleyEnv,
  startParleyProcess,
  stop,
} from '../lib/parley-process.ts';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const CONNECTORS = Number(process.env.BENCH_CONNECTORS ?? 64);

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

const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-'));
const port = await freePort();
const integration = await startIntegration();
const env = parleyEnv(port, dataDir, { LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' });
const { company, client } = await createBenchClient(env);
const ids: string[] = [];
for (let i = 0; i < CONNECTORS; i++) {
  const c = await parleyCli(env, [
    'connectors',
    'create',
    '--company',
    company.id!,
    '--name',
    `c${i}`,
    '--type',
    'webhook',
    '--url',
    integration.url,
    '--api-key',
    nextKey(),
  ]);
  ids.push(c.id!);
}

let child: ChildProcess | undefined;
try {
  const baseUrl = `http://127.0.0.1:${port}`;
  child = await startParleyProcess(env, port);
  const tokenResponse = await fetch(`${baseUrl}/platform/v1/auth/token/client-credentials`, {
    method: 'POST',
    headers: {
      authorization: basicAuth(client.client_id!, client.client_secret!),
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
  if (child) await stop(child);
  integration.close();
  rmSync(dataDir, { recursive: true, force: true });
}
