import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
// @ts-expect-error no types
import autocannon from 'autocannon';
const cpuMs = (pid: number) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
const child = spawn(process.execPath, ['-e', "require('http').createServer((q,s)=>s.end('ok')).listen(39571,'127.0.0.1')"], { stdio: 'ignore' });
await sleep(500);
const c0 = cpuMs(child.pid!);
const r = await autocannon({ url: 'http://127.0.0.1:39571/', connections: 8, duration: 5 });
const c1 = cpuMs(child.pid!);
console.log('bare http req', r.requests.total, 'µs/req', ((c1 - c0) * 1000 / r.requests.total).toFixed(0));
child.kill();
