// Event webhooks through the transactional outbox: 10,000 events, each recorded in a transaction of its own (as a
// change records it), delivered by the real dispatcher over HTTP to a local sink. SQLite (the embedded default)
// unless BENCH_DATABASE_URL names a PostgreSQL database (each run then uses a schema of its own, dropped after).
//
// Two runs: every answer 200, and 10 % of the sink's answers 500 (a random tenth of first attempts; the retry, 5 s
// later, is answered 200, so the run ends within the bench's two minutes). Reported: deliveries per second (from
// the first commit to the last 2xx receipt), the delay from each event's commit to its first receipt (p50/p99;
// with failures, of events whose first attempt succeeded), and the count of events never delivered (must be 0).
//
// The sink and the producer run in this process, beside the dispatcher: on a 2-core machine they share its CPU.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropTestSchema, uniqueSchema } from '@parley/testing/databases';
import { loadConfig } from '../../packages/server/src/config/load.ts';
import { type AppContext, createContext } from '../../packages/server/src/context.ts';
import { createLogger } from '../../packages/server/src/logging/logger.ts';
import { percentile } from '../lib/stats.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
/** Offered rate of the latency run (events committed per second). */
const RATE = Number(process.env.BENCH_RATE ?? 1000);
const PRODUCERS = 8;

interface Sink {
  url: string;
  /** First 2xx receipt per webhook-id (performance.now()). */
  delivered: Map<string, number>;
  /** Webhook-ids whose first attempt was answered 500. */
  failedOnce: Set<string>;
  requests: number;
  failures: number;
  close(): void;
}

async function startSink(failureShare: number): Promise<Sink> {
  const failedOnce = new Set<string>();
  const sink: Sink = { url: '', delivered: new Map(), failedOnce, requests: 0, failures: 0, close: () => {} };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      sink.requests++;
      if (!failedOnce.has(id) && !sink.delivered.has(id) && Math.random() < failureShare) {
        failedOnce.add(id);
        sink.failures++;
        res.writeHead(500).end();
        return;
      }
      if (!sink.delivered.has(id)) sink.delivered.set(id, performance.now());
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  sink.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`;
  sink.close = () => server.close();
  return sink;
}

/** Records `EVENTS` events, each in its own transaction; answers each event's commit time by its id. */
async function produce(ctx: AppContext, companyId: string, rate: number): Promise<Map<string, number>> {
  const committed = new Map<string, number>();
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= EVENTS) return;
      if (rate > 0) {
        const due = started + (i * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      await ctx.store.db.transaction().execute((trx) =>
        ctx.events.record(trx, {
          type: 'conversation.csat',
          companyId,
          data: { conversation_id: `bench-${i}`, score: 1 + (i % 5), comment: null },
        }),
      );
      committed.set(`bench-${i}`, performance.now());
    }
  };
  await Promise.all(Array.from({ length: PRODUCERS }, worker));
  return committed;
}

async function run(label: string, failureShare: number, rate: number): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-webhooks-'));
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  const config = loadConfig({}, { dataDir, logLevel: 'warn', ...(databaseUrl ? { databaseUrl } : {}) });
  const schema = databaseUrl ? uniqueSchema() : undefined;
  const ctx = await createContext(config, createLogger('error'), { schema });
  const sink = await startSink(failureShare);
  try {
    const company = await ctx.companies.create(`Bench ${label}`);
    const { webhook } = await ctx.webhooks.service.create(
      company.id,
      { url: sink.url, events: ['conversation.csat'] },
      { actor: 'bench' },
    );
    await ctx.webhooks.serve();
    const firstCommit = performance.now();
    const committed = await produce(ctx, company.id, rate);
    const produceMs = performance.now() - firstCommit;
    // Map webhook-id → conversation id (the bench's own event key) once everything is in.
    const deadline = Date.now() + 90_000;
    while (sink.delivered.size < EVENTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const rows = await ctx.store.db
      .selectFrom('webhook_events')
      .select(['id', 'body'])
      .where('company_id', '=', company.id)
      .execute();
    const delays: number[] = [];
    let lastFirstAttempt = 0;
    let lastReceipt = 0;
    for (const row of rows) {
      const key = (JSON.parse(row.body) as { data: { conversation_id: string } }).data.conversation_id;
      const at = sink.delivered.get(row.id);
      if (at === undefined) continue;
      lastReceipt = Math.max(lastReceipt, at);
      if (sink.failedOnce.has(row.id)) continue;
      lastFirstAttempt = Math.max(lastFirstAttempt, at);
      delays.push(at - committed.get(key)!);
    }
    delays.sort((a, b) => a - b);
    const [newest] = await ctx.webhooks.service.deliveries(company.id, webhook.id, 1);
    const lost = EVENTS - sink.delivered.size;
    // Deliveries answered 2xx at their first attempt, per second from the first commit to the last of them.
    const spanS = (lastFirstAttempt - firstCommit) / 1000;
    console.log(
      [
        `${label} (${ctx.store.dialect}${rate ? `, offered ${rate}/s` : ', producer unthrottled'}):`,
        `  events committed          ${EVENTS} in ${(produceMs / 1000).toFixed(2)} s (${Math.round(EVENTS / (produceMs / 1000))}/s)`,
        `  deliveries/s              ${Math.round(delays.length / spanS)} (${delays.length} first-attempt deliveries in ${spanS.toFixed(2)} s, first commit → last receipt)`,
        `  all delivered after       ${((lastReceipt - firstCommit) / 1000).toFixed(2)} s (newest delivery: ${newest?.status})`,
        `  sink requests             ${sink.requests} (${sink.failures} answered 500)`,
        `  commit → receipt          p50 ${percentile(delays, 50, true).toFixed(0)} ms, p99 ${percentile(delays, 99, true).toFixed(0)} ms, max ${(delays.at(-1) ?? 0).toFixed(0)} ms${failureShare ? ` (first-attempt successes; ${sink.failedOnce.size} delivered by their retry)` : ''}`,
        `  never delivered           ${lost}`,
      ].join('\n'),
    );
    if (lost > 0) process.exitCode = 1;
  } finally {
    await ctx.close();
    sink.close();
    rmSync(dataDir, { recursive: true, force: true });
    if (schema && databaseUrl) await dropTestSchema(schema, databaseUrl);
  }
}

// Throughput: the producer commits as fast as it can, the dispatcher drains the backlog.
await run('throughput, all answers 200', 0, 0);
// Delay: a steady offered rate below capacity, so the delay is the dispatcher's and not a backlog's.
await run(`delay at ${RATE}/s, all answers 200`, 0, RATE);
await run('throughput, 10 % of answers 500', 0.1, 0);
await run(`delay at ${RATE}/s, 10 % of answers 500`, 0.1, RATE);
