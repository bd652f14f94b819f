/**
 * Conversation creation benchmark: how many conversations a node opens per second with the tokens a visitor needs
 * (docs/operations.md "Capacity"). Side by side in one run, on the same machine and load:
 *
 * - the cache of company rows off (`PARLEY_COMPANY_CACHE_SIZE=0`) and on (packages/server/src/companies/company-cache.ts);
 * - three SDK requests per conversation (create, connect-token, subscribe-token) and one (create with
 *   `realtime_tokens: true`, what the SDK sends).
 *
 *   npm run bench -- create                                  (1,000 conversations per row, SQLite)
 *   npm run bench -- create --store=postgres                 (PostgreSQL + Redis, as the streaming bench finds them)
 *   npm run bench -- create --conversations=500 --cpu-prof=/tmp/create.cpuprofile   (profile of the last row's
 *                                                             server thread, summarised)
 *   BENCH_COMPARE_ROOT=/tmp/main npm run bench -- create --only=cache-one --rounds=3   (before/after, alternating)
 *
 * The server runs on the main thread, the load side (node:http keep-alive, or `--client=fetch`; 50 at a time) in a
 * worker thread with an event loop of its own; both share this machine's cores, so the figures are a lower bound for a dedicated node.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { type CpuProfile, startCpuProfile, summariseCpuProfile } from '../lib/cpu-profile.ts';

const STORE = process.argv.includes('--store=postgres') ? 'postgres' : 'sqlite';
const PROFILE_FILE = process.argv.find((a) => a.startsWith('--cpu-prof='))?.slice('--cpu-prof='.length);
const GOAL_PER_SECOND = 1_000;
/** `--only=cache-one`: only the path the SDK takes (cache on, one request), for before/after rounds. */
const ONLY_CACHE_ONE = process.argv.includes('--only=cache-one');
/**
 * Another checkout (e.g. `git archive main` unpacked, with a node_modules whose `@parley/*` links point into it) whose
 * server runs the same rows in this same process, alternating with this checkout's (`--rounds=N`): before and after a
 * change, side by side. Its rows are marked `@compare`.
 */
const COMPARE_ROOT = process.env.BENCH_COMPARE_ROOT;
const CONCURRENCY = 50;
/**
 * The load side's HTTP client. `http` (default): node:http with 50 keep-alive sockets, about half the CPU per request
 * of `fetch` (undici's WHATWG layer) — the load shares the machine's two cores with the server, so what it spends is
 * taken from the figure. `--client=fetch` keeps the earlier load side, to compare.
 */
const CLIENT = process.argv.includes('--client=fetch') ? 'fetch' : 'http';

function arg(name: string, fallback: number): number {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  return found ? Number(found.split('=')[1]) : fallback;
}

type LoadData = {
  baseUrl: string;
  companyId: string;
  count: number;
  oneCall: boolean;
  client: 'http' | 'fetch';
};

/** A checkout whose server a row runs: this one, or BENCH_COMPARE_ROOT's (marked `@compare`). */
interface Checkout {
  label: string;
  startTestServer: typeof import('@parley/testing/test-server').startTestServer;
}

async function checkouts(): Promise<Checkout[]> {
  const mine = await import('@parley/testing/test-server');
  const list: Checkout[] = [{ label: 'this checkout', startTestServer: mine.startTestServer }];
  if (COMPARE_ROOT) {
    // The other checkout's own packages (its node_modules/@parley links point into it), in this same process.
    const other = (await import(
      pathToFileURL(`${COMPARE_ROOT}/packages/testing/src/test-server.ts`).href
    )) as typeof mine;
    list.push({ label: '@compare', startTestServer: other.startTestServer });
  }
  return list;
}

async function runServerSide(): Promise<void> {
  if (STORE === 'postgres') {
    process.env.PARLEY_TEST_DATABASE_URL ??=
      process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    process.env.PARLEY_TEST_REDIS_URL ??= process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  }
  const count = arg('conversations', 1000);
  const rounds = arg('rounds', 1);
  const rows: string[] = [];
  console.log(
    `load average before: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const servers = await checkouts();
  // Rounds alternate the checkouts, and which goes first (the first row of a round pays for the previous server's
  // leftovers), so a change in the machine's load falls on both alike.
  for (let round = 1; round <= rounds; round++) {
    for (const checkout of round % 2 === 1 ? servers : [...servers].reverse()) {
      for (const cache of ONLY_CACHE_ONE ? [true] : [false, true]) {
        const profile = PROFILE_FILE && round === rounds && checkout === servers[0];
        await runRows(checkout, cache, count, profile ? PROFILE_FILE : undefined, (row) =>
          rows.push(`| ${rounds > 1 ? `${round} | ` : ''}${checkout.label} ${row}`),
        );
      }
    }
  }
  console.log(
    `\nconversation creation with tokens (${STORE === 'postgres' ? 'PostgreSQL + Redis' : 'SQLite'}), ${CONCURRENCY} at a time, load side's client ${CLIENT === 'http' ? 'node:http (keep-alive)' : 'fetch'}:`,
  );
  console.log(
    `| ${rounds > 1 ? 'round | ' : ''}checkout | cache | requests per conversation | conversations | ms | per second | server thread CPU µs per conversation | load avg (1 min) |`,
  );
  console.log(`|${rounds > 1 ? '---|' : ''}---|---|---|---|---|---|---|---|`);
  for (const row of rows) console.log(row);
  console.log(`goal: >= ${GOAL_PER_SECOND} conversations a second with their tokens on one node`);
}

/** One fresh server of `checkout`; its rows (three requests, then one) as table cells after the checkout's. */
async function runRows(
  checkout: Checkout,
  cache: boolean,
  count: number,
  profileFile: string | undefined,
  addRow: (row: string) => void,
): Promise<void> {
  const server = await checkout.startTestServer({
    ...(STORE === 'postgres' ? { database: 'postgres' as const, redis: true } : {}),
    config: {
      logLevel: 'warn',
      ...(cache ? {} : { companyCacheSize: 0 }),
      http: { maxConnectionsPerAddress: 1_000_000 },
      webchat: {
        conversationsPerMinutePerSession: 1_000_000,
        conversationsPerMinutePerIp: 1_000_000,
        realtimeRedisPrefix: `parley:bench:${randomUUID().slice(0, 8)}`,
      },
    },
  });
  try {
    const company = await server.ctx.companies.create('Bench Co');
    const employee = await server.ctx.digitalEmployees.getDefault(company.id);
    // As the streaming bench: no greeting, so the figure is the creation's and its tokens'.
    await server.ctx.digitalEmployees.update(company.id, employee.id, { settings: { greeting: null } });
    for (const oneCall of ONLY_CACHE_ONE ? [true] : [false, true]) {
      const profiler = cache && oneCall && profileFile ? await startCpuProfile() : undefined;
      const cpuBefore = serverThreadCpuMs();
      const ms = await runLoad({
        baseUrl: server.baseUrl,
        companyId: company.id,
        count,
        oneCall,
        client: CLIENT,
      });
      const cpuMs = serverThreadCpuMs() - cpuBefore;
      const profile: CpuProfile | undefined = await profiler?.stop();
      const perSecond = Math.round((1000 * count) / ms);
      const load = loadavg()[0]!.toFixed(2);
      addRow(
        `| ${cache ? 'on ' : 'off'} | ${oneCall ? 'one (create with realtime_tokens)' : 'three (create, connect-token, subscribe-token)'} | ${count} | ${ms} | ${perSecond} | ${Number.isNaN(cpuMs) ? '—' : Math.round((1000 * cpuMs) / count)} | ${load} |`,
      );
      if (profile && profileFile) {
        writeFileSync(profileFile, JSON.stringify(profile));
        console.log(
          `\nserver thread, cache on, one request (${profileFile}):\n${summariseCpuProfile(profile)}\n`,
        );
      }
    }
  } finally {
    await server.close();
  }
}

/**
 * CPU time of this process's main thread (the server's; the load runs in a worker thread), in ms, from Linux's
 * /proc (10 ms ticks): unlike the rate, it hardly moves with what else the shared machine runs. NaN elsewhere.
 */
function serverThreadCpuMs(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    // Fields after the command's closing parenthesis; utime and stime are the 14th and 15th of the line.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

/** Linux's USER_HZ, the unit of /proc's CPU times (100 on every architecture Node runs on). */
const CLOCK_TICKS_PER_SECOND = 100;

/** Runs one row's creations from a worker thread; resolves with the milliseconds they took. */
async function runLoad(data: LoadData): Promise<number> {
  // Worker threads do not inherit tsx's loader hooks: register them first, then load this file as the worker.
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(import.meta.url)}); })`;
  const worker = new Worker(bootstrap, { eval: true, workerData: data });
  try {
    return await new Promise<number>((resolve, reject) => {
      worker.on('error', reject);
      worker.on('message', (message: { ms: number }) => resolve(message.ms));
    });
  } finally {
    await worker.terminate();
  }
}

async function createOne(data: LoadData): Promise<void> {
  const headers = {
    'content-type': 'application/json',
    'x-session-id': randomUUID(),
    'x-company': data.companyId,
  };
  const post = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    const url = `${data.baseUrl}/sdk/v1${path}`;
    const { status, text } =
      data.client === 'http'
        ? await postWithHttp(url, headers, JSON.stringify(body))
        : await postWithFetch(url, headers, body);
    if (status < 200 || status > 299) throw new Error(`${path}: ${status} ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  if (data.oneCall) {
    const created = await post('/conversations', { realtime_tokens: true });
    const tokens = created.realtime_tokens as { connection_token?: string; subscription_token?: string };
    if (!tokens?.connection_token || !tokens.subscription_token)
      throw new Error('no tokens with the conversation');
    return;
  }
  const created = await post('/conversations', {});
  await post('/auth/connect-token', {});
  await post('/auth/subscribe-token', { conversation_id: created.id });
}

async function postWithFetch(
  url: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

/** One keep-alive socket per request in flight, reused (the worker's own agent). */
const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

function postWithHttp(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function runLoadSide(data: LoadData): Promise<void> {
  // A few first, so the row does not time the connection pool's and the JIT's start.
  await Promise.all(Array.from({ length: 20 }, () => createOne(data)));
  const started = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < data.count) {
        next++;
        await createOne(data);
      }
    }),
  );
  parentPort!.postMessage({ ms: Date.now() - started });
}

if (isMainThread) await runServerSide();
else await runLoadSide(workerData as LoadData);
