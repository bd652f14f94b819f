// `node --import tsx faults/lib/instrumented-node.ts <report-file> <interval-ms>`: a Parley node exactly as
// `parley serve` starts it (the server's own startServer), plus a reporter that appends one JSON line of the
// process's figures to <report-file> every interval. The soak reads those lines; the server code is untouched.
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startServer } from '../../packages/server/src/main.ts';

export interface NodeSample {
  pid: number;
  at: string;
  uptime_s: number;
  rss_bytes: number;
  heap_used_bytes: number;
  /** process.getActiveResourcesInfo().length: sockets, timers, handles the event loop is waiting on. */
  active_resources: number;
  event_loop_delay_p99_ms: number;
  event_loop_delay_max_ms: number;
}

function startReporter(file: string, intervalMs: number): void {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const timer = setInterval(() => {
    const memory = process.memoryUsage();
    const sample: NodeSample = {
      pid: process.pid,
      at: new Date().toISOString(),
      uptime_s: Math.round(process.uptime()),
      rss_bytes: memory.rss,
      heap_used_bytes: memory.heapUsed,
      active_resources: process.getActiveResourcesInfo().length,
      event_loop_delay_p99_ms: delay.percentile(99) / 1e6,
      event_loop_delay_max_ms: delay.max / 1e6,
    };
    delay.reset();
    appendFileSync(file, `${JSON.stringify(sample)}\n`);
  }, intervalMs);
  // The reporter must not keep a draining node alive.
  timer.unref();
}

const [file, interval] = process.argv.slice(2);
if (!file || !interval) {
  process.stderr.write('usage: instrumented-node.ts <report-file> <interval-ms>\n');
  process.exit(2);
}
startReporter(file, Number(interval));
await startServer();
