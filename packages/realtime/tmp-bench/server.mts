import { createServer } from 'node:http';
import { createRealtimeEngine, silentLogger } from '../src/index.ts';
const engine = await createRealtimeEngine({
  token: { hmacSecretKeys: ['s'] }, logger: silentLogger, apiKey: 'k',
  namespaces: [{ name: 'chat', allow_subscribe_for_client: true, history_size: 100, history_ttl: '1h', force_recovery: true }],
  commandRate: false,
});
const server = createServer((req, res) => void engine.apiHandler(req, res));
engine.attach(server);
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as any).port }));
const mem = () => { (globalThis as any).gc?.(); (globalThis as any).gc?.(); const m = process.memoryUsage(); return { rss: m.rss, heap: m.heapUsed, ext: m.external + m.arrayBuffers }; };
process.on('message', async (msg: any) => {
  if (msg === 'mem') process.send!({ mem: mem(), stats: engine.stats() });
  if (msg?.publish) {
    const t = Date.now();
    for (let i = 0; i < msg.publish; i++) await engine.publish({ channel: 'chat:fan', data: { i, text: 'hello world message payload of moderate size' } });
    process.send!({ published: Date.now() - t });
  }
});
