// PARLEY_WORKERS: token grants/s and server CPU per grant of one Parley process against the same server run as a
// primary with 2 workers (node:cluster), both on PostgreSQL + Redis (what workers need), measured in alternating
// rounds of the same load (bench/lib/http-load.ts, keep-alive connections spread over the workers by the primary).
// Server CPU counts the whole process tree (primary and workers), read from /proc.
//
// Goal (issue "Run it in production"): with 2 workers, grants/s ≥ 1.6 × one worker's while CPU per grant stays
// within 10 %. On a 2-core machine the load generator and PostgreSQL share the same two cores, which caps what a
// second worker can add: the figure to read beside the ratio is the CPU per grant.
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { uniqueSchema } from '@parley/testing/databases';
import { freePort } from '@parley/testing/process';
import pg from 'pg';
import { type LoadResult, runLoad } from '../lib/http-load.ts';
import {
  assertClean,
  basicAuth,
  createBenchClient,
  fmt,
  parleyEnv,
  startParleyProcess,
  stop,
} from '../lib/parley-process.ts';
import { treeCpuMs } from '../lib/proc-stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const ROUND_S = Number(process.env.BENCH_ROUND_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const BODY = 'grant_type=client_credentials&scope=connector%3Awrite';

interface Server {
  name: string;
  pid: number;
  url: string;
  stop: () => Promise<void>;
}

async function withSchema<T>(body: (databaseUrl: string) => Promise<T>): Promise<T> {
  const schema = uniqueSchema();
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  try {
    return await body(url.toString());
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}

const started: Server[] = [];
const results = new Map<string, { requests: number; seconds: number; cpuMs: number; p99: number[] }>();
await withSchema(async (databaseUrl) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-workers-'));
  try {
    const shared = {
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      PARLEY_RATE_LIMIT_PREFIX: `bench-workers-${process.pid}:`,
      PARLEY_TOKENS_PER_MINUTE: String(1_000_000_000),
      LOG_LEVEL: 'warn',
    };
    const { client } = await createBenchClient({ ...parleyEnv(0, dataDir, shared), LOG_LEVEL: 'error' });
    const authorization = basicAuth(client.client_id!, client.client_secret!);
    for (const workers of [1, 2]) {
      const port = await freePort();
      const child = await startParleyProcess(
        parleyEnv(port, dataDir, { ...shared, PARLEY_WORKERS: String(workers) }),
        port,
      );
      started.push({
        name: `${workers} worker${workers > 1 ? 's' : ''}`,
        pid: child.pid!,
        url: `http://127.0.0.1:${port}/platform/v1/auth/token/client-credentials`,
        stop: () => stop(child),
      });
    }
    const load = (url: string, duration: number): Promise<LoadResult> =>
      runLoad({
        url,
        method: 'POST',
        headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
        body: BODY,
        connections: CONNECTIONS,
        duration,
      });
    for (const server of started) assertClean(server.name, await load(server.url, 2)); // warm-up (JIT, pools)
    console.log(`${ROUNDS} alternating rounds of ${ROUND_S} s, ${CONNECTIONS} keep-alive connections`);
    for (let round = 0; round < ROUNDS; round++) {
      for (const server of started) {
        const cpuBefore = treeCpuMs(server.pid);
        const result = await load(server.url, ROUND_S);
        const cpu = treeCpuMs(server.pid) - cpuBefore;
        assertClean(server.name, result);
        const sum = results.get(server.name) ?? { requests: 0, seconds: 0, cpuMs: 0, p99: [] };
        sum.requests += result.requests.total;
        sum.seconds += result.duration;
        sum.cpuMs += cpu;
        sum.p99.push(result.latency.p99);
        results.set(server.name, sum);
        console.log(
          `  round ${round + 1}/${ROUNDS} ${server.name}: ${Math.round(result.requests.average)}/s`,
        );
      }
    }
  } finally {
    for (const server of started) await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

const row = (name: string) => {
  const r = results.get(name)!;
  const sorted = [...r.p99].sort((a, b) => a - b);
  return {
    rate: r.requests / r.seconds,
    cpuPerGrant: (r.cpuMs * 1000) / r.requests,
    p99: sorted[sorted.length >> 1]!,
  };
};
const one = row('1 worker');
const two = row('2 workers');
console.log(
  '\nPOST token endpoint on PostgreSQL + Redis, LOG_LEVEL=warn, one process vs a primary with 2 workers',
);
console.log('| server     |  grants/s |  p99 (ms) | CPU µs/grant |');
console.log('|------------|-----------|-----------|--------------|');
for (const [name, r] of [
  ['1 worker', one],
  ['2 workers', two],
] as const)
  console.log(`| ${name.padEnd(10)} | ${fmt(r.rate, 0)} | ${fmt(r.p99)} |    ${fmt(r.cpuPerGrant, 0)} |`);
const scale = two.rate / one.rate;
const cpuDrift = two.cpuPerGrant / one.cpuPerGrant;
console.log(
  `\n2 workers / 1 worker grants/s: ${scale.toFixed(2)}x   goal >= 1.6x   ${scale >= 1.6 ? 'MET' : 'MISSED'}`,
);
console.log(
  `CPU per grant, 2 workers / 1: ${cpuDrift.toFixed(2)}x   goal <= 1.10x   ${cpuDrift <= 1.1 ? 'MET' : 'MISSED'}`,
);
console.log(
  `machine: ${availableParallelism()} CPUs (the load generator and PostgreSQL run on the same cores)`,
);
