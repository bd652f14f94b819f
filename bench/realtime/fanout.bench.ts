/**
 * Fan-out benchmark: our engine (memory broker, webchat namespace with history + recovery) against a bare `ws`
 * broadcast server and socket.io rooms, with the same subscribers, channels, ~100-byte JSON payload and a fixed
 * publish rate. Each server runs in its own process so its CPU time (`process.cpuUsage()` over the measured
 * window) and memory (after GC) are its own; the load generator runs in separate processes on the same 2 cores,
 * which is why CPU time per delivery, not raw throughput, is the figure to compare.
 *
 * Usage: `npm run bench -- realtime` (or `node --import tsx --expose-gc bench/realtime/fanout.bench.ts [flags]`)
 *   --peers=engine,ws,socketio   which servers to run (default all)
 *   --skip-capacity              skip the 20,000-connection run
 *   --profile                    write a V8 CPU profile of each server's measured window to test-artifacts/profiles/
 *   --scenario=1,2               which scenarios to run (default both)
 *   --rate=N                     offered deliveries per second (default 20,000)
 * Everything listens on 127.0.0.1 and every phase is bounded in time.
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Centrifuge } from 'centrifuge';
import WebSocket from 'ws';
import { signHmacJwt } from '../../packages/realtime/src/tokens/jwt.ts';
import { LatencyHistogram } from './lib/histogram.ts';
import { ChildProcessClient } from './lib/ipc.ts';
import { BENCH_SECRET, ENGINE_NAMESPACE, type ServerKind } from './lib/servers.ts';

interface Scenario {
  label: string;
  subscribers: number;
  channels: number;
}

const ALL_SCENARIOS: Scenario[] = [
  { label: '1,000 subs / 100 ch', subscribers: 1_000, channels: 100 },
  { label: '5,000 subs / 10 ch', subscribers: 5_000, channels: 10 },
];
const scenarioArg = process.argv.find((a) => a.startsWith('--scenario='))?.slice('--scenario='.length);
const SCENARIOS = scenarioArg
  ? ALL_SCENARIOS.filter((_, i) => scenarioArg.split(',').includes(String(i + 1)))
  : ALL_SCENARIOS;
/** Offered load in both scenarios; the publish rate follows from the subscribers per channel. */
const rateArg = process.argv.find((a) => a.startsWith('--rate='));
const DELIVERIES_PER_SEC = rateArg ? Number(rateArg.slice('--rate='.length)) : 20_000;
const WARMUP_MS = 2_000;
const MEASURE_MS = 6_000;
const LOAD_PROCESSES = 4;
const OPEN_CONCURRENCY = 64;
const CAPACITY_TARGET = 20_000;
/** Bounds on connection setup; on a starved machine the runs continue with the connections that made it. */
const OPEN_BUDGET_MS = 40_000;
const CAPACITY_OPEN_BUDGET_MS = 80_000;
const CAPACITY_CHANNELS = 100;

/** The operations goals (docs/design.md "Operations"): CPU per delivery near bare `ws`, small idle connections. */
const GOALS = {
  cpuVsWs: 1.15,
  idleConnectionKiB: 10,
  connections: CAPACITY_TARGET,
};

const args = process.argv.slice(2);
const peersArg = args.find((a) => a.startsWith('--peers='))?.slice('--peers='.length);
const PEERS = (peersArg?.split(',') ?? ['engine', 'ws', 'socketio']) as ServerKind[];
const PROFILE = args.includes('--profile');
const SKIP_CAPACITY = args.includes('--skip-capacity');
const PEER_NAMES: Record<ServerKind, string> = {
  engine: 'parley engine',
  ws: 'bare ws',
  socketio: 'socket.io',
};

const here = new URL('.', import.meta.url).pathname;
const serverFile = `${here}lib/server-process.ts`;
const loadFile = `${here}lib/load-process.ts`;
/** Git-ignored, next to the test results. */
const PROFILE_DIR = new URL('../../test-artifacts/profiles', import.meta.url).pathname;

interface RunResult {
  scenario: string;
  kind: ServerKind;
  missing?: string;
  opened?: number;
  failed?: number;
  offeredPerSec?: number;
  deliveriesPerSec?: number;
  p50Ms?: number;
  p99Ms?: number;
  cpuMicrosPerDelivery?: number;
  /** The user-space and kernel shares of `cpuMicrosPerDelivery` (a socket write is mostly kernel time). */
  userMicrosPerDelivery?: number;
  systemMicrosPerDelivery?: number;
  rssPerConnKiB?: number;
  heapPerConnKiB?: number;
  centrifugeCheck?: string;
}

/** The server's CPU time over the measured window, in µs, and the publications it made in that window. */
interface CpuSample {
  cpuMicros: number;
  userMicros: number;
  systemMicros: number;
  published: number;
}

interface MemorySample {
  rss: number;
  heapUsed: number;
  external: number;
  connections: number;
}

function channelNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${ENGINE_NAMESPACE}:c${i}`);
}

/** Subscriber j listens on channel j mod channels; loader k opens the subscribers j with j mod loaders = k. */
function assignChannels(subscribers: number, channels: string[], loaders: number): string[][] {
  const perLoader: string[][] = Array.from({ length: loaders }, () => []);
  for (let j = 0; j < subscribers; j++) perLoader[j % loaders]!.push(channels[j % channels.length]!);
  return perLoader;
}

async function startServerProcess(kind: ServerKind): Promise<{ server: ChildProcessClient; port: number }> {
  const server = new ChildProcessClient(serverFile, PROFILE ? [kind, PROFILE_DIR] : [kind]);
  const ready = await server.whenReady();
  return { server, port: ready.port as number };
}

async function openSubscribers(
  loaders: ChildProcessClient[],
  kind: ServerKind,
  port: number,
  perLoader: string[][],
  budgetMs: number,
): Promise<{ opened: number; failed: number; skipped: number; firstError: string }> {
  const deadline = Date.now() + budgetMs;
  const replies = await Promise.all(
    loaders.map((loader, k) =>
      loader.request<{ opened: number; failed: number; skipped: number; firstError: string }>(
        'open',
        { kind, port, channels: perLoader[k], userPrefix: `l${k}u`, concurrency: OPEN_CONCURRENCY, deadline },
        budgetMs + 60_000,
      ),
    ),
  );
  const sum = (key: 'opened' | 'failed' | 'skipped') => replies.reduce((s, r) => s + r[key], 0);
  return {
    opened: sum('opened'),
    failed: sum('failed'),
    skipped: sum('skipped'),
    firstError: replies.find((r) => r.firstError)?.firstError ?? '',
  };
}

const perConnectionKiB = (before: number, after: number, connections: number) =>
  connections > 0 ? (after - before) / connections / 1024 : Number.NaN;

/** The real `centrifuge` SDK, subscribed next to the raw load clients, must receive publications too. */
function startCentrifugeCheck(port: number, channel: string) {
  let received = 0;
  const client = new Centrifuge(`ws://127.0.0.1:${port}/connection/websocket`, {
    websocket: WebSocket,
    token: signHmacJwt({ sub: 'sdk-check' }, BENCH_SECRET),
  });
  const sub = client.newSubscription(channel);
  sub.on('publication', () => received++);
  sub.subscribe();
  client.connect();
  return {
    finish(): string {
      client.disconnect();
      return received > 0 ? `centrifuge SDK received ${received}` : 'centrifuge SDK received NOTHING';
    },
  };
}

async function runScenario(
  kind: ServerKind,
  scenario: Scenario,
  loaders: ChildProcessClient[],
): Promise<RunResult> {
  const result: RunResult = { scenario: scenario.label, kind };
  let started: { server: ChildProcessClient; port: number };
  try {
    started = await startServerProcess(kind);
  } catch (error) {
    return { ...result, missing: error instanceof Error ? error.message : String(error) };
  }
  const { server, port } = started;
  try {
    const channels = channelNames(scenario.channels);
    const base = await server.request<MemorySample>('mem');
    const openStart = performance.now();
    const opened = await openSubscribers(
      loaders,
      kind,
      port,
      assignChannels(scenario.subscribers, channels, loaders.length),
      OPEN_BUDGET_MS,
    );
    const problems = [
      opened.failed > 0 ? `${opened.failed} failed (${opened.firstError})` : '',
      opened.skipped > 0 ? `${opened.skipped} not attempted, time budget spent` : '',
    ].filter(Boolean);
    console.log(
      `  ${scenario.label} · ${PEER_NAMES[kind]}: ${opened.opened} subscribers ready in ${fmt((performance.now() - openStart) / 1000, 1)} s${problems.length ? `; ${problems.join('; ')}` : ''}`,
    );
    result.opened = opened.opened;
    result.failed = opened.failed;
    await sleep(500);
    const idle = await server.request<MemorySample>('mem');
    result.rssPerConnKiB = perConnectionKiB(base.rss, idle.rss, opened.opened);
    result.heapPerConnKiB = perConnectionKiB(
      base.heapUsed + base.external,
      idle.heapUsed + idle.external,
      opened.opened,
    );

    const check = kind === 'engine' ? startCentrifugeCheck(port, channels[0]!) : undefined;
    const publishRate = DELIVERIES_PER_SEC / (scenario.subscribers / scenario.channels);
    result.offeredPerSec = DELIVERIES_PER_SEC * (opened.opened / scenario.subscribers);
    await server.request('publish-start', { channels, ratePerSec: publishRate });
    await sleep(WARMUP_MS);

    await Promise.all(loaders.map((l) => l.request('count-start')));
    await server.request('cpu-start');
    const windowStart = performance.now();
    await sleep(MEASURE_MS);
    const label = scenario.label.replace(/[^a-z0-9]+/gi, '-');
    const cpu = await server.request<CpuSample>('cpu-stop', { label });
    const windowMs = performance.now() - windowStart;
    const counts = await Promise.all(
      loaders.map((l) => l.request<{ deliveries: number; histogram: number[] }>('count-stop')),
    );
    await server.request('publish-stop');
    result.centrifugeCheck = check?.finish();

    const histogram = new LatencyHistogram();
    let deliveries = 0;
    for (const c of counts) {
      deliveries += c.deliveries;
      histogram.merge(c.histogram);
    }
    result.deliveriesPerSec = deliveries / (windowMs / 1000);
    result.p50Ms = histogram.percentileMicros(0.5) / 1000;
    result.p99Ms = histogram.percentileMicros(0.99) / 1000;
    // The CPU is divided by the deliveries the server made in its window (each publication to every subscriber of
    // its channel), not by what the load processes happened to read in theirs: on a loaded machine those lag or catch
    // up by ±40 % (docs/operations.md "Fan-out CPU per delivery"), which says nothing about the server's work.
    const made = cpu.published * (opened.opened / scenario.channels);
    result.cpuMicrosPerDelivery = made > 0 ? cpu.cpuMicros / made : Number.NaN;
    result.userMicrosPerDelivery = made > 0 ? cpu.userMicros / made : Number.NaN;
    result.systemMicrosPerDelivery = made > 0 ? cpu.systemMicros / made : Number.NaN;
    return result;
  } finally {
    await Promise.all(loaders.map((l) => l.request('close-all')));
    await server.stop();
  }
}

/**
 * A short unmeasured run so the load processes are JIT-warm before the first measured peer (otherwise the first
 * peer in the list pays for the load generator's cold start in its latency figures).
 */
async function warmUpLoaders(loaders: ChildProcessClient[], kind: ServerKind): Promise<void> {
  const { server, port } = await startServerProcess(kind);
  try {
    const channels = channelNames(10);
    await openSubscribers(loaders, kind, port, assignChannels(400, channels, loaders.length), 20_000);
    await server.request('publish-start', { channels, ratePerSec: 100 });
    await Promise.all(loaders.map((l) => l.request('count-start')));
    await sleep(1_500);
    await server.request('publish-stop');
    await Promise.all(loaders.map((l) => l.request('count-stop')));
  } finally {
    await Promise.all(loaders.map((l) => l.request('close-all')));
    await server.stop();
  }
}

interface CapacityResult {
  target: number;
  limitNote: string;
  opened: number;
  failed: number;
  live: number;
  seconds: number;
  rssPerConnKiB: number;
  heapPerConnKiB: number;
  rssTotalMiB: number;
}

/** Soft limit on open files of this process (children inherit it); Linux only, else Infinity. */
function openFileLimit(): number {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.split(/\s{2,}/)[1];
    return soft === undefined || soft === 'unlimited' ? Number.POSITIVE_INFINITY : Number(soft);
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

async function runCapacity(loaders: ChildProcessClient[]): Promise<CapacityResult> {
  const { server, port } = await startServerProcess('engine');
  // One descriptor per connection on top of what the server already holds (stdio, IPC, epoll, listener, ...).
  const limit = openFileLimit();
  const { open } = await server.request<{ open: number }>('fds');
  const room = limit - open - 8;
  const target = Math.min(CAPACITY_TARGET, room);
  const limitNote =
    target < CAPACITY_TARGET
      ? `capped by ulimit -n ${limit} (hard limit, not raisable in this sandbox): the server process already holds ${open} descriptors`
      : `ulimit -n ${limit}`;
  try {
    const channels = channelNames(CAPACITY_CHANNELS);
    const base = await server.request<MemorySample>('mem');
    const startedAt = performance.now();
    const opened = await openSubscribers(
      loaders,
      'engine',
      port,
      assignChannels(target, channels, loaders.length),
      CAPACITY_OPEN_BUDGET_MS,
    );
    const seconds = (performance.now() - startedAt) / 1000;
    if (opened.failed > 0)
      console.log(`  capacity: ${opened.failed} connections failed: ${opened.firstError}`);
    if (opened.skipped > 0) console.log(`  capacity: ${opened.skipped} not attempted (time budget spent)`);
    await sleep(1_000);
    const idle = await server.request<MemorySample>('mem');
    // Liveness: one publication per channel must reach every open connection.
    await Promise.all(loaders.map((l) => l.request('count-start')));
    await server.request('publish-once', { channels });
    let live = 0;
    for (let i = 0; i < 100 && live < opened.opened; i++) {
      await sleep(100);
      const counts = await Promise.all(loaders.map((l) => l.request<{ deliveries: number }>('count-peek')));
      live = counts.reduce((s, c) => s + c.deliveries, 0);
    }
    await Promise.all(loaders.map((l) => l.request('count-stop')));
    return {
      target,
      limitNote,
      opened: opened.opened,
      failed: opened.failed,
      live,
      seconds,
      rssPerConnKiB: perConnectionKiB(base.rss, idle.rss, opened.opened),
      heapPerConnKiB: perConnectionKiB(
        base.heapUsed + base.external,
        idle.heapUsed + idle.external,
        opened.opened,
      ),
      rssTotalMiB: idle.rss / 1024 / 1024,
    };
  } finally {
    await Promise.all(loaders.map((l) => l.request('close-all')));
    await server.stop();
  }
}

/**
 * How far the deliveries the load processes counted in the window may stray from the offered rate before the run is
 * flagged: they fell behind (fewer) or caught up on earlier publications (more), so its latency figures describe a
 * backlog (seen at load averages above 10). The CPU per delivery counts the server's own deliveries instead.
 */
const STEADY_TOLERANCE = 0.1;

function steadinessNote(r: RunResult): string {
  if (r.deliveriesPerSec === undefined || !r.offeredPerSec) return '';
  const share = r.deliveriesPerSec / r.offeredPerSec;
  return Math.abs(share - 1) > STEADY_TOLERANCE
    ? ` [NOT STEADY: the clients read ${fmt(100 * share, 0)} % of the offered rate in the window]`
    : '';
}

const fmt = (value: number | undefined, digits = 1) =>
  value === undefined || Number.isNaN(value)
    ? 'n/a'
    : value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function printTable(results: RunResult[]): void {
  const header = [
    'scenario',
    'server',
    'conns',
    'deliveries/s',
    'p50 ms',
    'p99 ms',
    'CPU µs/delivery',
    'vs ws',
    'RSS KiB/conn',
    'heap KiB/conn',
  ];
  const rows = results.map((r) => {
    if (r.missing)
      return [r.scenario, PEER_NAMES[r.kind], '-', `not run: ${r.missing}`, '', '', '', '', '', ''];
    const ws = results.find((x) => x.scenario === r.scenario && x.kind === 'ws');
    const ratio = ws?.cpuMicrosPerDelivery
      ? (r.cpuMicrosPerDelivery ?? Number.NaN) / ws.cpuMicrosPerDelivery
      : Number.NaN;
    return [
      r.scenario,
      PEER_NAMES[r.kind],
      String(r.opened),
      `${fmt(r.deliveriesPerSec, 0)} / ${fmt(r.offeredPerSec, 0)}`,
      fmt(r.p50Ms, 2),
      fmt(r.p99Ms, 2),
      fmt(r.cpuMicrosPerDelivery, 2),
      Number.isNaN(ratio) ? 'n/a' : `${fmt(ratio, 2)}×`,
      fmt(r.rssPerConnKiB, 1),
      fmt(r.heapPerConnKiB, 1),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(' │ ');
  console.log(line(header));
  console.log(widths.map((w) => '─'.repeat(w)).join('─┼─'));
  for (const row of rows) console.log(line(row));
}

function printGoals(results: RunResult[], capacity: CapacityResult | undefined): void {
  const verdict = (ok: boolean | undefined) => (ok === undefined ? 'n/a ' : ok ? 'PASS' : 'MISS');
  console.log('\nGoals (parley engine):');
  for (const scenario of SCENARIOS) {
    const get = (kind: ServerKind) =>
      results.find((r) => r.scenario === scenario.label && r.kind === kind && !r.missing)
        ?.cpuMicrosPerDelivery;
    const engine = get('engine');
    const ws = get('ws');
    const io = get('socketio');
    const ratio = engine !== undefined && ws !== undefined ? engine / ws : undefined;
    console.log(
      `  [${verdict(ratio === undefined ? undefined : ratio <= GOALS.cpuVsWs)}] ${scenario.label}: CPU/delivery ≤ ${GOALS.cpuVsWs}× bare ws — ${fmt(engine, 2)} µs vs ${fmt(ws, 2)} µs (${ratio === undefined ? 'n/a' : `${fmt(ratio, 2)}×`})`,
    );
    console.log(
      `  [${verdict(engine !== undefined && io !== undefined ? engine < io : undefined)}] ${scenario.label}: CPU/delivery < socket.io — ${fmt(engine, 2)} µs vs ${io === undefined ? 'not run' : `${fmt(io, 2)} µs`}`,
    );
  }
  const idle = results.filter((r) => r.kind === 'engine' && !r.missing && r.rssPerConnKiB !== undefined);
  const worstIdle = capacity?.rssPerConnKiB ?? Math.max(...idle.map((r) => r.rssPerConnKiB!));
  console.log(
    `  [${verdict(Number.isFinite(worstIdle) ? worstIdle < GOALS.idleConnectionKiB : undefined)}] memory per idle connection < ${GOALS.idleConnectionKiB} KiB — ${fmt(worstIdle, 1)} KiB RSS${capacity ? ` (${capacity.opened.toLocaleString('en-US')} conns; heap+external ${fmt(capacity.heapPerConnKiB, 1)} KiB)` : ''}`,
  );
  if (capacity) {
    console.log(
      `  [${verdict(capacity.live >= GOALS.connections)}] ${GOALS.connections.toLocaleString('en-US')} concurrent connections on one node — ${capacity.opened.toLocaleString('en-US')} open, ${capacity.live.toLocaleString('en-US')} live (${capacity.limitNote})`,
    );
  }
}

async function main(): Promise<void> {
  const overallStart = performance.now();
  console.log(
    `fan-out: ${DELIVERIES_PER_SEC.toLocaleString('en-US')} deliveries/s offered, warm-up ${WARMUP_MS / 1000} s, window ${MEASURE_MS / 1000} s, ${LOAD_PROCESSES} load processes; ~100-byte JSON; 127.0.0.1`,
  );
  // Other work on the machine shows up in latency first; CPU time per delivery is the robust comparison.
  console.log(
    `machine: ${cpus().length} cores, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ')} at start`,
  );
  const loaders = Array.from({ length: LOAD_PROCESSES }, () => new ChildProcessClient(loadFile, []));
  await Promise.all(loaders.map((l) => l.whenReady()));
  const results: RunResult[] = [];
  try {
    if (SCENARIOS.length > 0) await warmUpLoaders(loaders, PEERS[0]!);
    for (const scenario of SCENARIOS) {
      for (const kind of PEERS) {
        const r = await runScenario(kind, scenario, loaders);
        results.push(r);
        console.log(
          r.missing
            ? `  ${scenario.label} · ${PEER_NAMES[kind]}: not run (${r.missing})`
            : `  ${scenario.label} · ${PEER_NAMES[kind]}: ${fmt(r.deliveriesPerSec, 0)} deliveries/s, ${fmt(r.cpuMicrosPerDelivery, 2)} µs CPU/delivery (user ${fmt(r.userMicrosPerDelivery, 2)} + system ${fmt(r.systemMicrosPerDelivery, 2)})${r.centrifugeCheck ? `, ${r.centrifugeCheck}` : ''}${steadinessNote(r)}`,
        );
      }
    }
    let capacity: CapacityResult | undefined;
    if (!SKIP_CAPACITY && PEERS.includes('engine')) {
      capacity = await runCapacity(loaders);
      console.log(
        `  capacity: ${capacity.opened.toLocaleString('en-US')}/${capacity.target.toLocaleString('en-US')} connections opened in ${fmt(capacity.seconds, 1)} s, ${capacity.live.toLocaleString('en-US')} received a publication; server RSS ${fmt(capacity.rssTotalMiB, 0)} MiB`,
      );
    }
    console.log('');
    printTable(results);
    printGoals(results, capacity);
    const missing = results.filter((r) => r.missing).map((r) => r.kind);
    if (missing.includes('socketio')) {
      console.log('\nsocket.io peer not run: install `socket.io` and `socket.io-client` as devDependencies.');
    }
    console.log(`load average ${loadavg()[0]!.toFixed(1)} at the end`);
    console.log(`\ntotal bench time ${fmt((performance.now() - overallStart) / 1000, 0)} s`);
  } finally {
    await Promise.all(loaders.map((l) => l.stop()));
  }
}

await main();
