import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
// @ts-expect-error no types
import autocannon from 'autocannon';
import { runCli } from '/work/main/packages/server/src/cli/main.ts';
const dataDir = mkdtempSync(join(tmpdir(), 'parley-prof-'));
const port = 39555;
const env: Record<string, string | undefined> = { ...process.env, PORT: String(port), HOST: '127.0.0.1', PARLEY_DATA_DIR: dataDir, PARLEY_TOKENS_PER_MINUTE: '1000000000', LOG_LEVEL: process.env.LL ?? 'info' };
const out: string[] = [];
await runCli(['companies', 'create', '--name', 'B', '--json'], (l) => out.push(l), { env });
const company = JSON.parse(out.pop()!);
await runCli(['api-clients', 'create', '--company', company.id, '--name', 'b', '--scopes', 'connector:write', '--json'], (l) => out.push(l), { env });
const client = JSON.parse(out.pop()!);
const child = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir=/tmp/prof-server', '/work/main/packages/server/bin/parley.js', 'serve'], { env: { ...env, NODE_ENV: 'production' }, stdio: ['ignore', 'ignore', 'inherit'] });
for (let i = 0; i < 100; i++) { try { if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break; } catch {} await sleep(100); }
const r = await autocannon({ url: `http://127.0.0.1:${port}/platform/v1/auth/token/client-credentials`, method: 'POST', headers: { authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials', connections: 16, duration: 8 });
console.log('req/s', r.requests.average, 'p50', r.latency.p50, 'p99', r.latency.p99, 'non2xx', r.non2xx);
child.kill('SIGINT');
await new Promise((res) => child.once('exit', res));
