import { startTestServer } from './src/testing/test-server.ts';
import { createTestClient, basicAuth } from './src/oauth/oauth.test-helpers.ts';
const s = await startTestServer({ config: { logLevel: 'info', oauth: { tokensPerMinute: 1e9 } } });
const c = await createTestClient(s.ctx);
const headers = { authorization: basicAuth(c.clientId, c.secret), 'content-type': 'application/x-www-form-urlencoded' };
const inject = () => s.app.inject({ method: 'POST', url: '/platform/v1/auth/token/client-credentials', headers, payload: 'grant_type=client_credentials&scope=connector%3Awrite' });
for (let i = 0; i < 500; i++) await inject();
const N = 3000;
const cpu0 = process.cpuUsage(); const t0 = performance.now();
for (let i = 0; i < N; i++) { const r = await inject(); if (r.statusCode !== 200) throw new Error(r.body); }
const cpu = process.cpuUsage(cpu0); const wall = performance.now() - t0;
console.log(`token: ${((cpu.user + cpu.system) / N).toFixed(0)} µs CPU/req, ${(wall * 1000 / N).toFixed(0)} µs wall/req`);
const cpu1 = process.cpuUsage();
for (let i = 0; i < N; i++) await s.app.inject({ method: 'GET', url: '/healthz' });
const c2 = process.cpuUsage(cpu1);
console.log(`healthz: ${((c2.user + c2.system) / N).toFixed(0)} µs CPU/req`);
await s.close();
