/**
 * One bench server in its own process, so its CPU time and memory can be read without the load generator's:
 * `process.cpuUsage()` deltas over the measured window and `process.memoryUsage()` after a forced GC.
 */
import { preciseNowMs } from './histogram.ts';
import { serveRequests } from './ipc.ts';
import { type ServerKind, startServer } from './servers.ts';

const kind = process.argv[2] as ServerKind;
const server = await startServer(kind);
const PAD = 'x'.repeat(48);

let cpuStart: NodeJS.CpuUsage | undefined;
let publisher: NodeJS.Timeout | undefined;
let sent = 0;

function payload(seq: number): string {
  // ~100 bytes of JSON; `ts` is read by the clients for end-to-end latency.
  return `{"ts":${preciseNowMs().toFixed(3)},"seq":${seq},"text":"${PAD}"}`;
}

function gcTwice(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
}

serveRequests(
  {
    mem() {
      gcTwice();
      const usage = process.memoryUsage();
      return {
        rss: usage.rss,
        heapUsed: usage.heapUsed,
        external: usage.external,
        connections: server.connections(),
      };
    },
    'cpu-start'() {
      cpuStart = process.cpuUsage();
      return {};
    },
    'cpu-stop'() {
      const delta = process.cpuUsage(cpuStart);
      return { cpuMicros: delta.user + delta.system };
    },
    /** Publishes round-robin over `channels` at a fixed total rate, catching up from the clock each tick. */
    'publish-start'(message) {
      const channels = message.channels as string[];
      const ratePerSec = message.ratePerSec as number;
      const startedAt = performance.now();
      let next = 0;
      sent = 0;
      publisher = setInterval(() => {
        const due = Math.floor(((performance.now() - startedAt) * ratePerSec) / 1000);
        for (; sent < due; sent++) {
          server.publish(channels[next]!, payload(sent));
          next = (next + 1) % channels.length;
        }
      }, 5);
      return {};
    },
    'publish-stop'() {
      clearInterval(publisher);
      return { sent };
    },
    'publish-once'(message) {
      for (const channel of message.channels as string[]) server.publish(channel, payload(-1));
      return {};
    },
  },
  () => server.close(),
);

process.send?.({ type: 'ready', port: server.port });
