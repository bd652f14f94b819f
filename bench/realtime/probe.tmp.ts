import { ChildProcessClient } from './lib/ipc.ts';
import { openClient } from './lib/clients.ts';
import { preciseNowMs } from './lib/histogram.ts';
const kind = (process.argv[2] ?? 'engine') as 'engine';
const n = Number(process.argv[3] ?? 1000);
const server = new ChildProcessClient(new URL('./lib/server-process.ts', import.meta.url).pathname, [kind]);
const { port } = (await server.whenReady()) as { port: number };
const t0 = preciseNowMs();
const samples: [number, number][] = [];
const clients = [];
for (let i = 0; i < n; i += 50) {
  clients.push(...(await Promise.all(Array.from({ length: 50 }, (_, j) => openClient(kind, port, `bench:c${(i + j) % 100}`, `u${i + j}`, (ts) => { const now = preciseNowMs(); samples.push([now - t0, now - ts]); })))));
}
console.log('opened', clients.length, ((preciseNowMs() - t0) / 1000).toFixed(1), 's');
const channels = Array.from({ length: 100 }, (_, i) => `bench:c${i}`);
const pubStart = preciseNowMs() - t0;
await server.request('publish-start', { channels, ratePerSec: 200 });
await new Promise((r) => setTimeout(r, 8000));
await server.request('publish-stop');
const buckets = new Map<number, number[]>();
for (const [at, l] of samples) { const b = Math.floor((at - pubStart) / 500); (buckets.get(b) ?? buckets.set(b, []).get(b)!).push(l); }
for (const [b, ls] of [...buckets].sort((x, y) => x[0] - y[0])) { ls.sort((x, y) => x - y); console.log((b / 2).toFixed(1), ls.length, 'p50', ls[Math.floor(ls.length / 2)]!.toFixed(1), 'max', ls[ls.length - 1]!.toFixed(1)); }
for (const c of clients) c.close(); await server.stop();
