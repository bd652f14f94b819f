import { startTestServer } from './src/testing/test-server.ts';
import { createTestClient } from './src/oauth/oauth.test-helpers.ts';
import { createHmac, sign, generateKeyPairSync } from 'node:crypto';
import SQLite from 'better-sqlite3';
import { join } from 'node:path';
const s = await startTestServer({ config: { logLevel: 'silent' } });
const c = await createTestClient(s.ctx);
async function time(name: string, fn: () => unknown, n = 3000) {
  for (let i = 0; i < 300; i++) await fn();
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await fn();
  const d = process.cpuUsage(c0);
  console.log(name.padEnd(28), ((d.user + d.system) / n).toFixed(1), 'µs');
}
const db = s.ctx.store.db;
await time('kysely select client', () => db.selectFrom('api_clients').selectAll().where('id', '=', c.clientId).executeTakeFirst());
const raw = new SQLite(join(s.dataDir, 'parley.db'));
const stmt = raw.prepare('select * from api_clients where id = ?');
await time('raw prepared select', () => stmt.get(c.clientId));
await time('raw prepare+select', () => raw.prepare('select * from api_clients where id = ?').get(c.clientId));
const ins = raw.prepare("insert into audit_events (id, company_id, type, actor, subject, ip, details, created_at) values (?,?,?,?,?,?,?,?)");
let i = 0;
await time('raw prepared insert', () => ins.run(`x${i++}`, null, 't', null, null, null, '{}', new Date().toISOString()));
await time('hmac', () => createHmac('sha256', Buffer.alloc(32)).update(c.secret).digest());
const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
await time('es256 sign', () => sign('sha256', Buffer.from('x'.repeat(400)), { key: privateKey, dsaEncoding: 'ieee-p1363' }));
await time('noop await', () => Promise.resolve());
raw.close();
await s.close();
