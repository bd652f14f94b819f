/**
 * One bench server in its own process, so its CPU time and memory can be read without the load generator's:
 * `process.cpuUsage()` deltas over the measured window and `process.memoryUsage()` after a forced GC.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { preciseNowMs } from './histogram.ts';
import { serveRequests } from './ipc.ts';
import { type ServerKind, startServer } from './servers.ts';

const kind = process.argv[2] as ServerKind;
/** When set, a V8 CPU profile of exactly the measured window is written into this directory. */
const profileDir = process.argv[3];
const profiler = profileDir ? new Session() : undefined;
const server = await startServer(kind);
const PAD = 'x'.repeat(48);

let cpuStart: NodeJS.CpuUsage | undefined;
let publisher: NodeJS.Timeout | undefined;
let sent = 0;
/** `sent` when the measured window opened: the publications of the window are the server's own count of its work. */
let sentAtCpuStart = 0;

function payload(seq: number): string {
  // ~100 bytes of JSON; `ts` is read by the clients for end-to-end latency.
  return `{"ts":${preciseNowMs().toFixed(3)},"seq":${seq},"text":"${PAD}"}`;
}

/**
 * ~2 KiB of JSON of which about 20 bytes change from one publication to the next (the delta row): `ts` (read by the
 * clients, as in `payload`) and `seq`.
 */
const DOCUMENT_BODY = Array.from(
  { length: 84 },
  (_, i) => `"line ${String(i).padStart(2, '0')} of a document"`,
).join(',');

function documentPayload(seq: number): string {
  return `{"ts":${preciseNowMs().toFixed(3)},"seq":${String(seq).padStart(6, '0')},"lines":[${DOCUMENT_BODY}]}`;
}

function gcTwice(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
}

serveRequests(
  {
    /** Descriptors this process already uses (Linux), so a capacity run can fill exactly up to the limit. */
    fds() {
      try {
        return { open: readdirSync('/proc/self/fd').length };
      } catch {
        return { open: 0 };
      }
    },
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
    async 'cpu-start'() {
      if (profiler) {
        profiler.connect();
        await profiler.post('Profiler.enable');
        await profiler.post('Profiler.start');
      }
      sentAtCpuStart = sent;
      cpuStart = process.cpuUsage();
      return {};
    },
    async 'cpu-stop'(message) {
      const delta = process.cpuUsage(cpuStart);
      const published = sent - sentAtCpuStart;
      if (profiler && profileDir) {
        const { profile } = await profiler.post('Profiler.stop');
        profiler.disconnect();
        mkdirSync(profileDir, { recursive: true });
        const file = `${profileDir}/${kind}-${String(message.label ?? 'window')}-${process.pid}.cpuprofile`;
        writeFileSync(file, JSON.stringify(profile));
      }
      return {
        cpuMicros: delta.user + delta.system,
        userMicros: delta.user,
        systemMicros: delta.system,
        published,
      };
    },
    /** Publishes round-robin over `channels` at a fixed total rate, catching up from the clock each tick. */
    'publish-start'(message) {
      const channels = message.channels as string[];
      const ratePerSec = message.ratePerSec as number;
      const document = message.document === true;
      const startedAt = performance.now();
      let next = 0;
      sent = 0;
      publisher = setInterval(() => {
        const due = Math.floor(((performance.now() - startedAt) * ratePerSec) / 1000);
        for (; sent < due; sent++) {
          if (document) server.publish(channels[next]!, documentPayload(sent), true);
          else server.publish(channels[next]!, payload(sent));
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
