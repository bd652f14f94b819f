// Where a PostgreSQL knowledge search spends its time at 10,000 passages (docs/knowledge.md "Measuring it"): every
// statement of each search (the bench's questions, then its catalogue searches) timed from the client as it runs,
// then the same statement with its parameters run again under EXPLAIN (ANALYZE, BUFFERS) for the server's planning
// and execution times. Not a *.bench.ts: `node --import tsx bench/knowledge/explain.ts` runs it alone.
// EXPLAIN_SCHEMA=<name> keeps the indexed schema for the next run (it is reused when it exists); --plans prints the
// plan of the slowest execution of each statement; --dump and --sqlite are described below.
import { loadavg } from 'node:os';
import { dropTestSchema, uniqueSchema } from '@parley/testing/databases';
import { CompiledQuery, type Kysely, sql } from 'kysely';
import { loadConfig } from '../../packages/server/src/config/load.ts';
import { createContext } from '../../packages/server/src/context.ts';
import { KnowledgeService } from '../../packages/server/src/knowledge/knowledge.service.ts';
import { createLogger } from '../../packages/server/src/logging/logger.ts';
import type { Database } from '../../packages/server/src/storage/schema.ts';
import { percentile } from '../lib/stats.ts';
import { readCorpus, readQuestions } from './data.ts';
import { fillCompany } from './fill.ts';
import { catalogueQueries } from './scale.ts';

const url =
  process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TARGET = Number(process.env.BENCH_KNOWLEDGE_PASSAGES ?? 10_000);
const kept = process.env.EXPLAIN_SCHEMA;
const schema = kept ?? uniqueSchema();
// --sqlite <folder>: the dump (below) on SQLite in that folder instead, kept for the next run like EXPLAIN_SCHEMA.
const sqliteAt = process.argv.indexOf('--sqlite');
const config =
  sqliteAt > 0
    ? loadConfig({}, { dataDir: process.argv[sqliteAt + 1]!, logLevel: 'error' })
    : loadConfig({}, { dataDir: '/tmp', logLevel: 'error', databaseUrl: url });
const ctx = await createContext(config, createLogger('error'), sqliteAt > 0 ? {} : { schema });
const db = ctx.store.db;

let companyId = (await sql<{ id: string }>`select id from companies where name = 'Explain'`.execute(db))
  .rows[0]?.id;
if (!companyId) {
  companyId = (await ctx.companies.create('Explain')).id;
  const passages = await fillCompany(ctx.knowledge, companyId, TARGET);
  await ctx.knowledge.maintainIndex();
  console.log(`indexed ${passages} passages in schema ${schema}`);
}

/** Each statement of the searches in order: its SQL, parameters and client-side time. */
interface Ran {
  query: CompiledQuery;
  ms: number;
}
let ran: Ran[] = [];
const started = new Map<unknown, { query: CompiledQuery; at: number }>();
const timed = db.withPlugin({
  transformQuery: ({ node, queryId }) => {
    started.set(queryId, { query: db.getExecutor().compileQuery(node, queryId), at: performance.now() });
    return node;
  },
  transformResult: async ({ result, queryId }) => {
    const s = started.get(queryId);
    if (s) ran.push({ query: s.query, ms: performance.now() - s.at });
    started.delete(queryId);
    return result;
  },
}) as Kysely<Database>;
const knowledge = new KnowledgeService(
  timed,
  'postgres',
  ctx.audit,
  fetch,
  ctx.knowledge.settings,
  ctx.companies.cache,
);

// The service's own upkeep, as after a bulk of indexing (docs/knowledge.md "Index upkeep").
await ctx.knowledge.maintainIndex();
const printPlans = process.argv.includes('--plans');
// --dump <file>: every query's ranked passages (title and score), to compare the results of two versions.
const dumpAt = process.argv.indexOf('--dump');
if (dumpAt > 0) {
  const { writeFileSync } = await import('node:fs');
  const queries = [...readQuestions(readCorpus()).map((q) => q.query), ...catalogueQueries(200)];
  const results: Record<string, string[]> = {};
  for (const q of queries)
    results[q] = (await ctx.knowledge.search(companyId, q, { limit: 20 })).map(
      (p) => `${p.score} ${p.title}`,
    );
  writeFileSync(process.argv[dumpAt + 1]!, JSON.stringify(results, null, 1));
  await ctx.close();
  if (!kept && sqliteAt < 0) await dropTestSchema(schema, url);
  process.exit(0);
}
const articles = readCorpus();
const sets = {
  questions: readQuestions(articles).map((q) => q.query),
  catalogue: catalogueQueries(200),
};
const fmt = (v: number[]) =>
  `${[50, 99, 100].map((p) => percentile(v, p).toFixed(2).padStart(7)).join('')}   n=${v.length}`;
console.log(
  `load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
for (const [name, queries] of Object.entries(sets)) {
  for (const q of queries) await knowledge.search(companyId, q, { limit: 20 }); // warm-up
  const search: number[] = [];
  const byStatement: Array<{
    client: number[];
    planning: number[];
    execution: number[];
    worst?: [number, string];
    matched: Array<[number, number, string]>;
  }> = [];
  for (const q of queries) {
    ran = [];
    const t = performance.now();
    await knowledge.search(companyId, q, { limit: 20 });
    search.push(performance.now() - t);
    const statements = ran;
    for (const [i, r] of statements.entries()) {
      byStatement[i] ??= { client: [], planning: [], execution: [], matched: [] };
      const s = byStatement[i];
      s.client.push(r.ms);
      const plan = await db.executeQuery<{ 'QUERY PLAN': string }>(
        CompiledQuery.raw(`explain (analyze, buffers) ${r.query.sql}`, [...r.query.parameters]),
      );
      const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
      const planning = Number(/Planning Time: ([\d.]+)/.exec(text)?.[1]);
      const execution = Number(/Execution Time: ([\d.]+)/.exec(text)?.[1]);
      s.planning.push(planning);
      s.execution.push(execution);
      if (!s.worst || execution > s.worst[0]) s.worst = [execution, `${q}\n${text}`];
      // Passages the full-text engine matched (and ranked) for this statement: the bitmap heap scans' rows.
      const matched = [...text.matchAll(/Bitmap Heap Scan on knowledge_chunks.*rows=(\d+) loops/g)].reduce(
        (n, m) => n + Number(m[1]),
        0,
      );
      if (matched > 0) s.matched.push([matched, execution, q]);
    }
  }
  console.log(`\n${name}: ms p50 / p99 / max`);
  console.log(`  whole search (client)      ${fmt(search)}`);
  for (const [i, s] of byStatement.entries()) {
    console.log(`  statement ${i + 1} client          ${fmt(s.client)}`);
    console.log(`  statement ${i + 1} planning        ${fmt(s.planning)}`);
    console.log(`  statement ${i + 1} execution       ${fmt(s.execution)}`);
    if (printPlans && s.worst) console.log(s.worst[1]);
    if (s.matched.length > 0) {
      const most = [...s.matched].sort((a, b) => b[0] - a[0]).slice(0, 8);
      console.log(`  statement ${i + 1}: most passages matched (matched, execution ms, query)`);
      for (const [n, ms, q] of most) console.log(`    ${n}  ${ms.toFixed(2)}  ${q}`);
    }
  }
}
console.log(
  `load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
await ctx.close();
if (!kept) await dropTestSchema(schema, url);
