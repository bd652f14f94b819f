// The live chat the privacy benches run beside a sweep or an erasure, and how they print its latencies.
import { randomUUID } from 'node:crypto';
import { channelOf } from '@parley/webchat-protocol';
import type { AppContext } from '../../packages/server/src/context.ts';
import { percentile } from '../lib/stats.ts';

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
