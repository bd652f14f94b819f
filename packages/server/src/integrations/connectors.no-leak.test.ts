import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { type HttpResult, http } from '@parley/testing/http-client';
import {
  checkConnector,
  createConnector,
  createTenant,
  type KeyRecorder,
  listConnectors,
  putKey,
  startKeyRecorder,
  testKey,
} from '@parley/testing/integrations/connectors-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { sql } from 'kysely';

/** The random part of a test key: finding it anywhere means the key (or a long piece of it) leaked. */
const secretPart = (key: string) => key.slice(key.lastIndexOf('-') + 1);

for (const database of TEST_DATABASES) {
  describe(`no connector key leaks anywhere (${database})`, () => {
    let server: TestServer;
    let recorder: KeyRecorder;
    before(async () => {
      server = await startTestServer({
        database,
        config: { logLevel: 'trace', integrations: { checkTimeoutMs: 300 } },
      });
      recorder = await startKeyRecorder();
    });
    after(async () => {
      await server.close();
      await recorder.close();
    });

    it('finds no key in responses, logs, the audit table or the raw database after a full workout', async () => {
      const tenant = await createTenant(server);
      const other = await createTenant(server);
      const keys: string[] = [];
      const key = (label: string) => {
        const k = testKey(label);
        keys.push(k);
        return k;
      };
      const responses: HttpResult[] = [];
      const record = async (p: Promise<HttpResult>) => {
        const r = await p;
        responses.push(r);
        return r;
      };

      const created = await createConnector(server, tenant.companyId, {
        name: 'leaky?',
        url: `${recorder.url}/ok`,
        apiKey: key('created'),
      });
      const failing = await createConnector(server, tenant.companyId, {
        name: 'fails',
        url: `${recorder.url}/status/500`,
        apiKey: key('failing'),
      });
      const hanging = await createConnector(server, tenant.companyId, {
        name: 'hangs',
        url: `${recorder.url}/hang`,
        apiKey: key('hanging'),
      });
      const theirs = await createConnector(server, other.companyId, {
        name: 'theirs',
        type: 'openai',
        url: `${recorder.url}/v1`,
        apiKey: key('theirs'),
      });

      await record(putKey(server, tenant.auth, created.id, { api_key: key('rotated1') }));
      const current = key('rotated2');
      await record(putKey(server, tenant.auth, created.id, { api_key: current }));
      await record(putKey(server, tenant.auth, created.id, { api_key: current })); // repeat
      await record(putKey(server, tenant.auth, created.id, { api_key: key('stale') }, { 'if-match': '"1"' })); // 412
      await record(putKey(server, tenant.auth, theirs.id, { api_key: key('cross') })); // 404
      await record(putKey(server, other.auth, theirs.id, { api_key: key('theirs2') }));
      // Rejected keys are not echoed either.
      await record(putKey(server, tenant.auth, created.id, { api_key: `bad ${key('spaced')}` }));
      await record(
        putKey(server, tenant.auth, created.id, { api_key: key('extra'), extra: key('extra-field') }),
      );
      await record(putKey(server, tenant.auth, created.id, `{"api_key":"${key('broken')}"`));
      await record(
        http(`${server.baseUrl}/integrations/v1/connectors/api-keys/${created.id}`, {
          method: 'PUT',
          headers: { ...tenant.auth, 'content-type': 'text/plain' },
          body: key('plain'),
        }),
      );
      for (const id of [created.id, failing.id, hanging.id])
        await record(checkConnector(server, tenant.auth, id));
      await record(listConnectors(server, tenant.auth));
      await record(listConnectors(server, other.auth));
      // A tampered ciphertext.
      const sealed = (
        await server.ctx.store.db
          .selectFrom('connectors')
          .select('api_key_sealed')
          .where('id', '=', failing.id)
          .executeTakeFirstOrThrow()
      ).api_key_sealed!;
      await server.ctx.store.db
        .updateTable('connectors')
        .set({ api_key_sealed: `${sealed.slice(0, -3)}${sealed.endsWith('AAA') ? 'BBB' : 'AAA'}` })
        .where('id', '=', failing.id)
        .execute();
      await record(checkConnector(server, tenant.auth, failing.id));
      // An outbound failure thrown to a caller (what the digital employees see).
      const thrown = await server.ctx.connectorCaller
        .connectorFetch(tenant.companyId, hanging.id, '', { timeoutMs: 100 })
        .catch((e) => e);

      // The integration did receive the keys (so the scan below looks for strings that really flowed).
      assert.ok(recorder.authorizations().includes(`Bearer ${current}`));

      const haystacks: Array<[string, string]> = [
        ...responses.map((r, i): [string, string] => [
          `response ${i} (${r.status})`,
          `${JSON.stringify([...r.headers])}\n${r.text}`,
        ]),
        ['logs', server.logs.join('\n')],
        ['thrown error', `${thrown?.message}\n${thrown?.stack}\n${JSON.stringify(thrown)}`],
        ['audit', JSON.stringify(await server.ctx.audit.list({ limit: 1000 }))],
        ...(await rawDatabase(server)),
      ];
      assert.ok(server.logs.length > 20, 'the trace log was captured');
      // The raw dump really holds the data (so "not found" means something): the connector's name is in it.
      assert.ok(
        haystacks.some(
          ([where, text]) => /sqlite file|postgres table connectors/.test(where) && text.includes('leaky?'),
        ),
      );
      for (const k of keys) {
        for (const [where, text] of haystacks) {
          assert.ok(!text.includes(secretPart(k)), `key ${k} found in ${where}`);
        }
      }
    });
  });
}

/** Every byte of the database as stored: SQLite files (db, WAL, SHM) or every row of every table of the PG schema. */
async function rawDatabase(server: TestServer): Promise<Array<[string, string]>> {
  if (server.ctx.store.dialect === 'sqlite') {
    return readdirSync(server.dataDir)
      .filter((f) => f.startsWith('parley.db'))
      .map((f): [string, string] => [
        `sqlite file ${f}`,
        readFileSync(join(server.dataDir, f)).toString('latin1'),
      ]);
  }
  const db = server.ctx.store.db;
  const { rows: tables } = await sql<{ name: string }>`
    select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(
    db,
  );
  assert.ok(tables.some((t) => t.name === 'connectors'));
  const dumps: Array<[string, string]> = [];
  for (const { name } of tables) {
    const { rows } = await sql<{ row: string }>`select t::text as row from ${sql.table(name)} t`.execute(db);
    dumps.push([`postgres table ${name}`, rows.map((r) => r.row).join('\n')]);
  }
  return dumps;
}
