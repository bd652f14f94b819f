import { startTestServer } from './src/testing/test-server.ts';
import { createTestClient } from './src/oauth/oauth.test-helpers.ts';
import { oauthServices } from './src/oauth/oauth.services.ts';
import { rateLimiterFor } from './src/ratelimit/index.ts';
const s = await startTestServer({ config: { logLevel: 'silent' } });
const c = await createTestClient(s.ctx);
const o = oauthServices(s.ctx);
const lim = rateLimiterFor(s.ctx);
async function time(name: string, fn: () => unknown, n = 2000) {
  for (let i = 0; i < 200; i++) await fn();
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await fn();
  const d = process.cpuUsage(c0);
  console.log(name.padEnd(20), ((d.user + d.system) / n).toFixed(1), 'µs');
}
await time('authenticate', () => o.clients.authenticate(c.clientId, c.secret));
await time('issue', () => o.issuer.issue({ clientId: c.clientId, companyId: c.companyId, scopes: ['connector:write'] }));
await time('audit.record', () => s.ctx.audit.record({ type: 'token.issued', companyId: c.companyId, actor: 'x', subject: c.clientId, ip: '1.2.3.4', details: { a: 1 } }));
await time('limiter.hit', () => lim.hit('k', { limit: 1e9, windowMs: 60000 }));
await time('touch', () => o.clients.touch(c.clientId));
const tok = o.issuer.issue({ clientId: c.clientId, companyId: c.companyId, scopes: ['connector:write'] }).token;
await time('verify(cached)', () => o.verifier.verify(tok));
await s.close();
