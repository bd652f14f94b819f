import { ChildProcessClient } from './lib/ipc.ts';

const kind = process.argv[2]!;
const n = Number(process.argv[3] ?? 2000);
const server = new ChildProcessClient(new URL('./lib/server-process.ts', import.meta.url).pathname, [kind]);
const loader = new ChildProcessClient(new URL('./lib/load-process.ts', import.meta.url).pathname, []);
const { port } = (await server.whenReady()) as { port: number };
await loader.whenReady();
const t = performance.now();
const r = await loader.request('open', {
  kind,
  port,
  channels: Array.from({ length: n }, (_, i) => `bench:c${i % 100}`),
  userPrefix: 'u',
  concurrency: 64,
  deadline: Date.now() + 120000,
});
console.log(kind, JSON.stringify(r), ((performance.now() - t) / 1000).toFixed(1), 's');
await loader.stop();
await server.stop();
