/**
 * A load-generator process: opens subscriber connections to one server, then counts the publications they
 * receive inside the measured window and records their end-to-end latency (payload `ts` → arrival).
 */
import { type BenchClient, type EngineMode, openClient } from './clients.ts';
import { LatencyHistogram, preciseNowMs } from './histogram.ts';
import { serveRequests } from './ipc.ts';
import type { ServerKind } from './servers.ts';

let clients: BenchClient[] = [];
let counting = false;
let deliveries = 0;
let bytes = 0;
let histogram = new LatencyHistogram();

function onTimestamp(ts: number): void {
  if (!counting) return;
  deliveries++;
  histogram.recordMicros((preciseNowMs() - ts) * 1000);
}

function onBytes(count: number): void {
  if (counting) bytes += count;
}

/** A delivery without a readable timestamp (fossil delta): counted, no latency. */
function onDelivery(): void {
  if (counting) deliveries++;
}

/**
 * Opens `channels.length` connections, at most `concurrency` handshakes at a time (under the listen backlog);
 * stops starting new ones at `deadline` (ms since the epoch) so a starved machine yields partial figures.
 */
async function openAll(
  kind: ServerKind,
  port: number,
  channels: string[],
  userPrefix: string,
  concurrency: number,
  deadline: number,
  mode: EngineMode,
) {
  let next = 0;
  let failed = 0;
  let firstError = '';
  async function worker(): Promise<void> {
    while (next < channels.length && Date.now() < deadline) {
      const index = next++;
      try {
        clients.push(
          await openClient(
            kind,
            port,
            channels[index]!,
            `${userPrefix}${index}`,
            onTimestamp,
            onBytes,
            mode,
            onDelivery,
          ),
        );
      } catch (error) {
        failed++;
        firstError ||= error instanceof Error ? error.message : String(error);
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, channels.length) }, worker));
  return { opened: next - failed, failed, firstError, skipped: channels.length - next };
}

serveRequests(
  {
    open(message) {
      const { kind, port, channels, userPrefix, concurrency, deadline, mode } = message as unknown as {
        kind: ServerKind;
        port: number;
        channels: string[];
        userPrefix: string;
        concurrency: number;
        deadline: number;
        mode?: EngineMode;
      };
      return openAll(kind, port, channels, userPrefix, concurrency, deadline, mode ?? 'json');
    },
    'count-start'() {
      deliveries = 0;
      bytes = 0;
      histogram = new LatencyHistogram();
      counting = true;
      return {};
    },
    'count-peek'() {
      return { deliveries };
    },
    'count-stop'() {
      counting = false;
      return { deliveries, bytes, histogram: histogram.counts };
    },
    'close-all'() {
      for (const client of clients) client.close();
      clients = [];
      return {};
    },
  },
  () => {
    for (const client of clients) client.close();
  },
);

process.send?.({ type: 'ready' });
