/**
 * Transports and formats benchmark: the engine's server CPU time and bytes per delivery for JSON vs Protobuf over
 * WebSocket, WebSocket vs HTTP-streaming, and full documents vs fossil deltas, with the bare `ws` broadcast server as
 * the floor in the same run. Same method as fanout.bench.ts: each server in its own process (its own
 * `process.cpuUsage()` over the measured window), subscribers in separate load processes on the same cores, a fixed
 * publish rate. Bytes are what the subscribers read (WebSocket payloads, HTTP body chunks), per delivery.
 *
 * Usage: `npm run bench -- realtime` (runs fanout.bench.ts too), or
 * `node --import tsx --expose-gc bench/realtime/transports.bench.ts [--rate=N] [--rows=json,protobuf,…]`.
 * Everything listens on 127.0.0.1 and every phase is bounded in time.
 */
import { cpus, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EngineMode } from './lib/clients.ts';
import { LatencyHistogram } from './lib/histogram.ts';
import { ChildProcessClient } from './lib/ipc.ts';
import { ENGINE_NAMESPACE, type ServerKind } from './lib/servers.ts';

interface Row {
  key: string;
  label: string;
  kind: ServerKind;
  mode: EngineMode;
  /** Publish the ~2 KiB document (20 bytes change each time) instead of the ~100-byte message. */
  document: boolean;
}

const ROWS: Row[] = [
  { key: 'ws', label: 'bare ws (floor), 100 B', kind: 'ws', mode: 'json', document: false },
  { key: 'json', label: 'engine WebSocket JSON, 100 B', kind: 'engine', mode: 'json', document: false },
  {
    key: 'protobuf',
    label: 'engine WebSocket Protobuf, 100 B',
    kind: 'engine',
    mode: 'protobuf',
    document: false,
  },
  {
    key: 'http_stream',
    label: 'engine HTTP-streaming JSON, 100 B',
    kind: 'engine',
    mode: 'http_stream',
    document: false,
  },
  { key: 'doc', label: 'engine WebSocket JSON, 2 KiB doc', kind: 'engine', mode: 'json', document: true },
  {
    key: 'delta',
    label: 'engine WebSocket JSON, 2 KiB doc, fossil delta',
    kind: 'engine',
    mode: 'delta',
    document: true,
  },
];

const args = process.argv.slice(2);
const rateArg = args.find((a) => a.startsWith('--rate='));
const DELIVERIES_PER_SEC = rateArg ? Number(rateArg.slice('--rate='.length)) : 10_000;
const rowsArg = args.find((a) => a.startsWith('--rows='))?.slice('--rows='.length);
const SELECTED = rowsArg ? ROWS.filter((r) => rowsArg.split(',').includes(r.key)) : ROWS;
const SUBSCRIBERS = 1_000;
const CHANNELS = 100;
const WARMUP_MS = 2_000;
const MEASURE_MS = 6_000;
const LOAD_PROCESSES = 4;
const OPEN_BUDGET_MS = 40_000;
const GOALS = { protobufVsJsonCpu: 0.8, deltaBytesReduction: 5 };

const here = new URL('.', import.meta.url).pathname;
const serverFile = `${here}lib/server-process.ts`;
const loadFile = `${here}lib/load-process.ts`;

interface Result {
  row: Row;
  opened: number;
  deliveriesPerSec: number;
  cpuMicrosPerDelivery: number;
  bytesPerDelivery: number;
  p50Ms: number | undefined;
  p99Ms: number | undefined;
  error?: string;
}

const channels = Array.from({ length: CHANNELS }, (_, i) => `${ENGINE_NAMESPACE}:t${i}`);

async function runRow(row: Row, loaders: ChildProcessClient[]): Promise<Result> {
  const server = new ChildProcessClient(serverFile, [row.kind]);
  const { port } = (await server.whenReady()) as { port: number };
  try {
    const perLoader: string[][] = loaders.map(() => []);
    for (let j = 0; j < SUBSCRIBERS; j++) perLoader[j % loaders.length]!.push(channels[j % CHANNELS]!);
    const deadline = Date.now() + OPEN_BUDGET_MS;
    const opened = await Promise.all(
      loaders.map((loader, k) =>
        loader.request<{ opened: number; failed: number; firstError: string }>(
          'open',
          {
            kind: row.kind,
            port,
            channels: perLoader[k],
            userPrefix: `l${k}u`,
            concurrency: 64,
            deadline,
            mode: row.mode,
          },
          OPEN_BUDGET_MS + 60_000,
        ),
      ),
    );
    const openedCount = opened.reduce((sum, o) => sum + o.opened, 0);
    const firstError = opened.find((o) => o.firstError)?.firstError;
    await server.request('publish-start', {
      channels,
      ratePerSec: DELIVERIES_PER_SEC / (SUBSCRIBERS / CHANNELS),
      document: row.document,
    });
    await sleep(WARMUP_MS);
    await Promise.all(loaders.map((l) => l.request('count-start')));
    await server.request('cpu-start');
    const started = performance.now();
    await sleep(MEASURE_MS);
    const cpu = await server.request<{ cpuMicros: number }>('cpu-stop', { label: row.key });
    const windowMs = performance.now() - started;
    const counts = await Promise.all(
      loaders.map((l) => l.request<{ deliveries: number; bytes: number; histogram: number[] }>('count-stop')),
    );
    await server.request('publish-stop');
    const histogram = new LatencyHistogram();
    let deliveries = 0;
    let bytes = 0;
    for (const c of counts) {
      deliveries += c.deliveries;
      bytes += c.bytes;
      histogram.merge(c.histogram);
    }
    // Deltas carry no readable timestamp: no latency for that row.
    const timed = row.mode !== 'delta';
    return {
      row,
      opened: openedCount,
      deliveriesPerSec: deliveries / (windowMs / 1000),
      cpuMicrosPerDelivery: deliveries > 0 ? cpu.cpuMicros / deliveries : Number.NaN,
      bytesPerDelivery: deliveries > 0 ? bytes / deliveries : Number.NaN,
      p50Ms: timed ? histogram.percentileMicros(0.5) / 1000 : undefined,
      p99Ms: timed ? histogram.percentileMicros(0.99) / 1000 : undefined,
      ...(firstError ? { error: firstError } : {}),
    };
  } finally {
    await Promise.all(loaders.map((l) => l.request('close-all')));
    await server.stop();
  }
}

const fmt = (value: number | undefined, digits = 1) =>
  value === undefined || Number.isNaN(value)
    ? 'n/a'
    : value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function printTable(results: Result[]): void {
  const ws = results.find((r) => r.row.key === 'ws');
  const header = [
    'row',
    'conns',
    'deliveries/s',
    'CPU µs/delivery',
    'vs ws',
    'bytes/delivery',
    'p50 ms',
    'p99 ms',
  ];
  const rows = results.map((r) => [
    r.row.label,
    String(r.opened),
    fmt(r.deliveriesPerSec, 0),
    fmt(r.cpuMicrosPerDelivery, 2),
    ws ? `${fmt(r.cpuMicrosPerDelivery / ws.cpuMicrosPerDelivery, 2)}×` : 'n/a',
    fmt(r.bytesPerDelivery, 0),
    fmt(r.p50Ms, 2),
    fmt(r.p99Ms, 2),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(' │ ');
  console.log(line(header));
  console.log(widths.map((w) => '─'.repeat(w)).join('─┼─'));
  for (const row of rows) console.log(line(row));
}

function printGoals(results: Result[]): void {
  const get = (key: string) => results.find((r) => r.row.key === key);
  const verdict = (ok: boolean | undefined) => (ok === undefined ? 'n/a ' : ok ? 'PASS' : 'MISS');
  const json = get('json');
  const protobuf = get('protobuf');
  const cpuRatio = json && protobuf ? protobuf.cpuMicrosPerDelivery / json.cpuMicrosPerDelivery : undefined;
  console.log('\nGoals:');
  console.log(
    `  [${verdict(cpuRatio === undefined ? undefined : cpuRatio <= GOALS.protobufVsJsonCpu)}] Protobuf ≤ ${GOALS.protobufVsJsonCpu}× JSON CPU per delivery — ${fmt(protobuf?.cpuMicrosPerDelivery, 2)} µs vs ${fmt(json?.cpuMicrosPerDelivery, 2)} µs (${fmt(cpuRatio, 2)}×)`,
  );
  const doc = get('doc');
  const delta = get('delta');
  const reduction = doc && delta ? doc.bytesPerDelivery / delta.bytesPerDelivery : undefined;
  console.log(
    `  [${verdict(reduction === undefined ? undefined : reduction >= GOALS.deltaBytesReduction)}] fossil delta cuts bytes per delivery ≥ ${GOALS.deltaBytesReduction}× (2 KiB doc, 20 bytes change) — ${fmt(delta?.bytesPerDelivery, 0)} B vs ${fmt(doc?.bytesPerDelivery, 0)} B (${fmt(reduction, 1)}×)`,
  );
}

async function main(): Promise<void> {
  console.log(
    `transports: ${SUBSCRIBERS.toLocaleString('en-US')} subscribers / ${CHANNELS} channels, ${DELIVERIES_PER_SEC.toLocaleString('en-US')} deliveries/s offered, warm-up ${WARMUP_MS / 1000} s, window ${MEASURE_MS / 1000} s; 127.0.0.1`,
  );
  console.log(
    `machine: ${cpus().length} cores, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ')} at start`,
  );
  const loaders = Array.from({ length: LOAD_PROCESSES }, () => new ChildProcessClient(loadFile, []));
  await Promise.all(loaders.map((l) => l.whenReady()));
  const results: Result[] = [];
  try {
    for (const row of SELECTED) {
      const result = await runRow(row, loaders);
      results.push(result);
      console.log(
        `  ${row.label}: ${fmt(result.deliveriesPerSec, 0)} deliveries/s, ${fmt(result.cpuMicrosPerDelivery, 2)} µs CPU, ${fmt(result.bytesPerDelivery, 0)} B per delivery${result.error ? ` (some failed: ${result.error})` : ''}`,
      );
    }
    console.log('');
    printTable(results);
    printGoals(results);
    console.log(`load average ${loadavg()[0]!.toFixed(1)} at the end`);
  } finally {
    await Promise.all(loaders.map((l) => l.stop()));
  }
}

await main();
