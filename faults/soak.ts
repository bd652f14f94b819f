// `npm run soak -- --minutes N` (default 30): 200 visitors (half the official centrifuge client, half the SDK)
// chatting across two Parley nodes on a private PostgreSQL and Redis, each sending a message every 5–10 s. Every
// minute it prints each node's RSS, heap used, active resources and event-loop delay p99, read from inside the
// node (faults/lib/instrumented-node.ts). At the end: RSS growth after warm-up (the first 5 minutes, or the first
// sixth of a shorter run) and lost/dup/partial. Fails when RSS grew 5 % or more on a node, or anything was lost,
// duplicated or left partial, or a node died.
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { CentrifugeVisitor } from './lib/centrifuge-visitor.ts';
import { cleanupAll, installCleanupHandlers } from './lib/cleanup.ts';
import { type FaultCluster, startCluster } from './lib/cluster.ts';
import type { NodeSample } from './lib/instrumented-node.ts';
import { figureNotes, nodeProblems, nodesAlive } from './lib/scenario.ts';
import { SdkVisitor } from './lib/sdk-visitor.ts';
import { settle } from './lib/settle.ts';
import { Traffic } from './lib/traffic.ts';
import type { Visitor } from './lib/visitor.ts';

const RSS_GROWTH_LIMIT = 0.05;
const MiB = 1024 * 1024;

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    visitors: { type: 'string', default: '200' },
    'interval-seconds': { type: 'string', default: '60' },
  },
});
const minutes = Number(values.minutes);
const visitorCount = Number(values.visitors);
const intervalMs = Number(values['interval-seconds']) * 1000;
if (!(minutes > 0) || !(visitorCount >= 2) || !(intervalMs >= 1000)) {
  console.error('usage: npm run soak -- [--minutes N] [--visitors V (≥ 2)] [--interval-seconds S (≥ 1)]');
  process.exit(2);
}
/** Samples before this many ms are warm-up (caches filling, JIT, pools growing) and not judged. */
const warmUpMs = minutes >= 30 ? 5 * 60_000 : (minutes * 60_000) / 6;

/** Every sample a node wrote so far (one JSON line per interval). */
function samplesOf(file: string): NodeSample[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as NodeSample);
}

const sampleLine = (name: string, s: NodeSample | undefined) =>
  s
    ? `${name} rss=${(s.rss_bytes / MiB).toFixed(1)}MiB heap=${(s.heap_used_bytes / MiB).toFixed(1)}MiB ` +
      `handles=${s.active_resources} eld_p99=${s.event_loop_delay_p99_ms.toFixed(1)}ms`
    : `${name} (no sample yet)`;

/**
 * RSS growth after warm-up: the mean of the last few samples against the mean of the first few (up to three at
 * each end, so one garbage collection landing on a sample does not decide the verdict). Null: too few samples.
 */
function rssGrowth(samples: NodeSample[], startedAt: number): number | null {
  const judged = samples.filter((s) => Date.parse(s.at) - startedAt >= warmUpMs).map((s) => s.rss_bytes);
  if (judged.length < 2) return null;
  const window = Math.min(3, Math.floor(judged.length / 2));
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const first = mean(judged.slice(0, window));
  return (mean(judged.slice(-window)) - first) / first;
}

async function startVisitors(cluster: FaultCluster, visitors: Visitor[]): Promise<void> {
  const { companyId } = cluster.seeded;
  const url = cluster.balancer.url;
  for (let i = 0; i < visitorCount; i++)
    visitors.push(
      i % 2 === 0
        ? new CentrifugeVisitor(`cf-${i / 2 + 1}`, url, companyId)
        : new SdkVisitor(`sdk-${(i + 1) / 2}`, url, companyId),
    );
  // In batches, as visitors arrive over time rather than all in one millisecond.
  for (let i = 0; i < visitors.length; i += 20)
    await Promise.all(visitors.slice(i, i + 20).map((v) => v.start()));
}

async function soak(visitors: Visitor[]): Promise<boolean> {
  const cluster = await startCluster({ run: 'soak', report: { intervalMs } });
  const startedAt = Date.now();
  console.log(
    `soak: ${minutes} min, ${visitorCount} visitors, nodes ${cluster.nodes.map((n) => n.name).join(' ')}`,
  );
  console.log(`soak: node logs and samples in ${cluster.artifacts}`);
  await startVisitors(cluster, visitors);
  const traffic = new Traffic(visitors, { minIntervalMs: 5_000, maxIntervalMs: 10_000, maxInFlight: 3 });
  traffic.start();

  const endAt = startedAt + minutes * 60_000;
  while (Date.now() < endAt) {
    await sleep(Math.min(intervalMs, endAt - Date.now()));
    const minute = ((Date.now() - startedAt) / 60_000).toFixed(1);
    const lines = cluster.nodes.map((n) => sampleLine(n.name, samplesOf(n.options.report!.file).at(-1)));
    console.log(`[${minute.padStart(5)} min] sent=${traffic.sent} ${lines.join(' | ')}`);
  }

  await traffic.stop(20_000);
  const figures = await settle(cluster, visitors, 30_000);
  const alive = await nodesAlive(cluster);
  const problems = nodeProblems(cluster, alive);
  let passed =
    problems.length === 0 && figures.lost === 0 && figures.duplicates === 0 && figures.partial === 0;
  for (const node of cluster.nodes) {
    const growth = rssGrowth(samplesOf(node.options.report!.file), startedAt);
    const judged = growth === null ? 'not enough samples after warm-up' : `${(growth * 100).toFixed(1)} %`;
    const ok = growth !== null && growth < RSS_GROWTH_LIMIT;
    passed &&= ok;
    console.log(
      `soak: ${node.name} RSS growth after ${(warmUpMs / 60_000).toFixed(1)} min warm-up: ${judged} ${ok ? 'ok' : '✗'}`,
    );
  }
  for (const line of [...problems.map((p) => `✗ ${p}`), ...figureNotes(figures)]) console.log(`  ${line}`);
  console.log(
    `soak: acked=${figures.acked} stored=${figures.stored} lost=${figures.lost} delivered=${figures.delivered} ` +
      `dup=${figures.duplicates} partial=${figures.partial} unanswered=${figures.unanswered} ` +
      `nodes_alive=${alive.filter(Boolean).length}/${alive.length} ${passed ? 'PASS' : 'FAIL'}`,
  );
  return passed;
}

installCleanupHandlers();
const visitors: Visitor[] = [];
let exitCode = 1;
try {
  exitCode = (await soak(visitors)) ? 0 : 1;
} catch (err) {
  console.log(`soak: ERROR ${(err as Error).message.split('\n')[0]} FAIL`);
} finally {
  for (const visitor of visitors) visitor.close();
  await cleanupAll();
}
process.exit(exitCode);
