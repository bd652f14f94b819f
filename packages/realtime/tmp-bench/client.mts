import { fork } from 'node:child_process';
import WebSocket from 'ws';
import { signHmacJwt } from '../src/tokens/jwt.ts';
const N = Number(process.argv[2] ?? 5000);
const child = fork(new URL('./server.mts', import.meta.url).pathname, [], { execArgv: ['--import', 'tsx', '--expose-gc'] });
const ask = (m: any) => new Promise<any>((r) => { child.once('message', r); child.send(m); });
const { port } = await new Promise<any>((r) => child.once('message', r));
const base = await ask('mem');
const token = signHmacJwt({ sub: 'u' }, 's');
let received = 0; const sockets: WebSocket[] = [];
let subscribed = 0;
for (let i = 0; i < N; i++) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/connection/websocket`, { perMessageDeflate: false });
  sockets.push(ws);
  ws.on('open', () => ws.send(JSON.stringify({ id: 1, connect: { token } }) + '\n' + JSON.stringify({ id: 2, subscribe: { channel: 'chat:fan' } })));
  ws.on('message', (d) => { const s = d.toString(); if (s.includes('"id":2')) subscribed++; if (s === '{}') ws.send('{}'); received += (s.match(/"pub"/g) || []).length; });
  ws.on('error', (e) => console.error('err', e.message));
  if (i % 100 === 99) { while (subscribed < i - 300) await new Promise((r) => setTimeout(r, 5)); }
}
const tw = Date.now(); while (subscribed < N && Date.now() - tw < 30000) await new Promise((r) => setTimeout(r, 50)); console.log("subscribed", subscribed);
await new Promise((r) => setTimeout(r, 500));
const after = await ask('mem');
console.log('connections', N, after.stats);
console.log('per connection: rss', Math.round((after.mem.rss - base.mem.rss) / N), 'B heap', Math.round((after.mem.heap - base.mem.heap) / N), 'B external', Math.round((after.mem.ext - base.mem.ext) / N), 'B');
const M = Number(process.argv[3] ?? 100);
const t0 = Date.now();
const pub = await ask({ publish: M });
while (received < N * M && Date.now() - t0 < 60000) await new Promise((r) => setTimeout(r, 5));
const dt = Date.now() - t0;
console.log(`fan-out: ${M} publications x ${N} subscribers = ${received} deliveries in ${dt} ms (${Math.round(received / dt * 1000)}/s); publish loop ${pub.published} ms`);
for (const s of sockets) s.terminate();
child.kill();
process.exit(0);
