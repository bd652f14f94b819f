import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
// @ts-expect-error no types
import autocannon from 'autocannon';
import { runCli } from '/work/main/packages/server/src/cli/main.ts';
const cpuMs = (pid: number) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
async function bench(name: string, pid: number, url: string, auth: string) {
  await autocannon({ url, method: 'POST', headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&scope=connector%3Awrite', connections: 8, duration: 2 });
  const c0 = cpuMs(pid);
  const r = await autocannon({ url, method: 'POST', headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&scope=connector%3Awrite', connections: 8, duration: 6 });
  const c1 = cpuMs(pid);
  console.log(name, 'req', r.requests.total, 'non2xx', r.non2xx, 'cpu ms', c1 - c0, 'µs/grant', ((c1 - c0) * 1000 / r.requests.total).toFixed(0), 'grants per cpu-s', (r.requests.total / ((c1 - c0) / 1000)).toFixed(0));
}
const dataDir = mkdtempSync(join(tmpdir(), 'parley-prof-'));
const port = 39556;
const env: Record<string, string | undefined> = { ...process.env, PORT: String(port), HOST: '127.0.0.1', PARLEY_DATA_DIR: dataDir, PARLEY_TOKENS_PER_MINUTE: '1000000000', LOG_LEVEL: process.env.LL ?? 'info' };
const out: string[] = [];
await runCli(['companies', 'create', '--name', 'B', '--json'], (l) => out.push(l), { env: { ...env, LOG_LEVEL: 'error' } });
const company = JSON.parse(out.pop()!);
await runCli(['api-clients', 'create', '--company', company.id, '--name', 'b', '--scopes', 'connector:write', '--json'], (l) => out.push(l), { env: { ...env, LOG_LEVEL: 'error' } });
const client = JSON.parse(out.pop()!);
const child = spawn(process.execPath, ['/work/main/packages/server/bin/parley.js', 'serve'], { env: { ...env, NODE_ENV: 'production' }, stdio: ['ignore', 'ignore', 'inherit'] });
const oidc = spawn(process.execPath, ['/work/main/bench/oauth/oidc-provider-server.mjs'], { env: { ...process.env, PORT: '39557', BENCH_CLIENT_ID: 'c', BENCH_CLIENT_SECRET: 's', NODE_ENV: 'production' }, stdio: ['ignore', 'ignore', 'ignore'] });
for (let i = 0; i < 200; i++) { try { if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok && (await fetch('http://127.0.0.1:39557/jwks')).ok) break; } catch {} await sleep(100); }
for (let i = 0; i < 2; i++) {
  await bench('parley', child.pid!, `http://127.0.0.1:${port}/platform/v1/auth/token/client-credentials`, `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`);
  await bench('oidc  ', oidc.pid!, 'http://127.0.0.1:39557/token', `Basic ${Buffer.from('c:s').toString('base64')}`);
}
child.kill(); oidc.kill();
