import { startTestServer } from './src/testing/test-server.ts';
import { createTestClient } from './src/oauth/oauth.test-helpers.ts';
import { CompiledQuery } from 'kysely';
const s = await startTestServer({ config: { logLevel: 'silent' } });
const c = await createTestClient(s.ctx);
const db = s.ctx.store.db;
const compiled = db.selectFrom('api_clients').selectAll().where('id', '=', 'x').compile();
const variants: Record<string, () => Promise<unknown>> = {
  kysely: () => db.selectFrom('api_clients').selectAll().where('id', '=', c.clientId).executeTakeFirst(),
  precompiled: () => db.executeQuery(CompiledQuery.raw(compiled.sql, [c.clientId])),
  auditRecord: () => s.ctx.audit.record({ type: 'token.issued', companyId: c.companyId, actor: 'x', subject: c.clientId, ip: '1.2.3.4', details: { a: 1 } }),
  noop: async () => {},
};
const totals: Record<string, number> = Object.fromEntries(Object.keys(variants).map((k) => [k, 0]));
for (let round = 0; round < 10; round++) {
  for (const [name, fn] of Object.entries(variants)) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < 300; i++) await fn();
    const d = process.cpuUsage(c0);
    totals[name] += (d.user + d.system) / 300;
  }
}
for (const [k, v] of Object.entries(totals)) console.log(k.padEnd(12), (v / 10).toFixed(1), 'µs');
await s.close();
