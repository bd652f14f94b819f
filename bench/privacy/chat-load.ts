// The live chat the privacy benches run beside a sweep or an erasure, and how they print its latencies.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropTestSchema, uniqueSchema } from '@parley/testing/databases';
import { channelOf } from '@parley/webchat-protocol';
import { loadConfig } from '../../packages/server/src/config/load.ts';
import { type AppContext, createContext } from '../../packages/server/src/context.ts';
import { createLogger } from '../../packages/server/src/logging/logger.ts';
import { percentile } from '../lib/stats.ts';

/**
 * The server's services in this process: SQLite in a temporary folder, or a schema of its own in the PostgreSQL
 * database BENCH_DATABASE_URL names; the Redis broker when BENCH_REDIS_URL is set. `close()` removes both again.
 */
export async function openBenchContext(name: string) {
  const dataDir = mkdtempSync(join(tmpdir(), `parley-bench-${name}-`));
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  const redisUrl = process.env.BENCH_REDIS_URL;
  const config = loadConfig(
    {},
    { dataDir, logLevel: 'warn', ...(databaseUrl ? { databaseUrl } : {}), ...(redisUrl ? { redisUrl } : {}) },
  );
  const schema = databaseUrl ? uniqueSchema() : undefined;
  const ctx = await createContext(config, createLogger('error'), { schema });
  return {
    ctx,
    /** "sqlite, memory broker" and the like, for the printed figures. */
    setup: `${ctx.store.dialect}, ${redisUrl ? 'redis' : 'memory'} broker`,
    async close() {
      await ctx.close();
      rmSync(dataDir, { recursive: true, force: true });
      if (schema && databaseUrl) await dropTestSchema(schema, databaseUrl);
    },
  };
}

/** How often the chat stores and publishes a message. */
const PUBLISH_EVERY_MS = 20;

/** A message stored and published every PUBLISH_EVERY_MS until `stop()`; answers each one's latency (ms). */
export function chat(ctx: AppContext, companyId: string, conversationId: string) {
  const latencies: number[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const started = performance.now();
      const snapshot = await ctx.webchat.store.insert({
        conversationId,
        role: 'user',
        author: null,
        status: 'complete',
        blocks: [{ id: randomUUID(), type: 'markdown', content: 'still chatting' }],
      });
      await ctx.webchat.realtime.publish({ channel: channelOf(companyId, conversationId), data: snapshot });
      const took = performance.now() - started;
      latencies.push(took);
      await new Promise((r) => setTimeout(r, Math.max(0, PUBLISH_EVERY_MS - took)));
    }
  })();
  return {
    latencies,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

/** The chat alone for `ms`: the floor a sweep's or an erasure's figures are read against. */
export async function chatAlone(
  ctx: AppContext,
  live: { companyId: string; id: string },
  ms: number,
): Promise<number[]> {
  const alone = chat(ctx, live.companyId, live.id);
  await new Promise((r) => setTimeout(r, ms));
  await alone.stop();
  return alone.latencies;
}

/** `p50 …, p99 …, max … (count)` of latencies in milliseconds. */
export const fmt = (values: number[]) => {
  const sorted = Float64Array.from(values).sort();
  return `p50 ${percentile(sorted, 50, true).toFixed(1)} ms, p99 ${percentile(sorted, 99, true).toFixed(1)} ms, max ${(sorted.at(-1) ?? 0).toFixed(1)} ms (${values.length})`;
};
