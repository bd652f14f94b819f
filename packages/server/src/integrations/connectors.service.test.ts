import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { testKey } from '@parley/testing/integrations/connectors-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';

const CLI = { actor: 'cli' };
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

for (const database of TEST_DATABASES) {
  describe(`connectors service (${database})`, () => {
    let server: TestServer;
    let companyId: string;
    let otherCompanyId: string;
    before(async () => {
      server = await startTestServer({ database });
      companyId = (await server.ctx.companies.create('Connectors Co')).id;
      otherCompanyId = (await server.ctx.companies.create('Other Co')).id;
    });
    after(() => server.close());

    it('creates connectors with validated name, type and URL; openai defaults its base URL', async () => {
      const connectors = server.ctx.connectors;
      const hook = await connectors.create(
        { companyId, name: ' Bot ', type: 'webhook', url: 'https://bot.example/hook' },
        CLI,
      );
      assert.equal(hook.name, 'Bot');
      assert.equal(hook.url, 'https://bot.example/hook');
      assert.equal(hook.apiKeySet, false);
      assert.equal(hook.keyVersion, 0);
      assert.equal(hook.rotatedAt, null);
      const ai = await connectors.create({ companyId, name: 'LLM', type: 'openai' }, CLI);
      assert.equal(ai.url, 'https://api.openai.com/v1');

      const cases: Array<[Record<string, string>, string]> = [
        [{ name: '', type: 'webhook', url: 'https://x.example' }, 'invalid_name'],
        [{ name: 'x'.repeat(201), type: 'webhook', url: 'https://x.example' }, 'invalid_name'],
        [{ name: 'a\u0007b', type: 'webhook', url: 'https://x.example' }, 'invalid_name'],
        [{ name: 'n', type: 'smtp', url: 'https://x.example' }, 'invalid_type'],
        [{ name: 'n', type: 'webhook' }, 'invalid_url'],
        [{ name: 'n', type: 'webhook', url: 'ftp://x.example' }, 'invalid_url'],
        [{ name: 'n', type: 'webhook', url: 'not a url' }, 'invalid_url'],
        [{ name: 'n', type: 'webhook', url: 'https://user:pass@x.example' }, 'invalid_url'],
        [{ name: 'n', type: 'webhook', url: 'https://x.example/#frag' }, 'invalid_url'],
        [{ name: 'n', type: 'webhook', url: 'https://x.example', apiKey: 'has space' }, 'invalid_api_key'],
        [{ name: 'n', type: 'webhook', url: 'https://x.example', apiKey: '' }, 'invalid_api_key'],
      ];
      for (const [input, code] of cases) {
        await assert.rejects(
          connectors.create({ companyId, ...input } as never, CLI),
          { code },
          JSON.stringify(input),
        );
      }
    });

    it('lists and finds only within the company; another company sees nothing', async () => {
      const c = await server.ctx.connectors.create(
        { companyId, name: 'Mine', type: 'webhook', url: 'https://m.example' },
        CLI,
      );
      assert.ok((await server.ctx.connectors.list(companyId)).some((x) => x.id === c.id));
      assert.ok(!(await server.ctx.connectors.list(otherCompanyId)).some((x) => x.id === c.id));
      assert.equal(await server.ctx.connectors.find(otherCompanyId, c.id), undefined);
      assert.equal(await server.ctx.connectors.find(companyId, 'not-a-uuid'), undefined);
      await assert.rejects(server.ctx.connectors.readCredentials(otherCompanyId, c.id), {
        code: 'connector_not_found',
      });
      await assert.rejects(
        server.ctx.connectors.rotateKey(
          { companyId: otherCompanyId, connectorId: c.id, apiKey: testKey() },
          CLI,
        ),
        { code: 'connector_not_found' },
      );
    });

    it('rotates: each new key is a new version, the current key opens, a repeated key changes nothing', async () => {
      const connectors = server.ctx.connectors;
      const first = testKey('first');
      const c = await connectors.create(
        { companyId, name: 'Rot', type: 'webhook', url: 'https://r.example', apiKey: first },
        CLI,
      );
      assert.equal(c.keyVersion, 1);
      assert.equal(c.rotatedAt, c.createdAt);
      assert.equal((await connectors.readCredentials(companyId, c.id)).apiKey, first);

      const second = testKey('second');
      const r2 = await connectors.rotateKey(
        { companyId, connectorId: c.id, apiKey: second },
        { actor: 'client:pcl_x', clientId: 'pcl_x', tokenId: 'jti-1', ip: '127.0.0.1' },
      );
      assert.deepEqual({ v: r2.keyVersion, changed: r2.changed }, { v: 2, changed: true });
      assert.equal((await connectors.readCredentials(companyId, c.id)).apiKey, second);

      const again = await connectors.rotateKey({ companyId, connectorId: c.id, apiKey: second }, CLI);
      assert.deepEqual(again, { connectorId: c.id, keyVersion: 2, rotatedAt: r2.rotatedAt, changed: false });

      // The previous key is a new version again (only the *current* key is recognised as a repeat).
      const back = await connectors.rotateKey({ companyId, connectorId: c.id, apiKey: first }, CLI);
      assert.equal(back.keyVersion, 3);
      assert.equal((await connectors.readCredentials(companyId, c.id)).apiKey, first);

      const events = await server.ctx.audit.list({
        companyId,
        type: 'connector.api_key_rotated',
        subject: c.id,
      });
      assert.equal(events.length, 2, 'one event per real rotation, none for the repeat');
      const byVersion = events.find((e) => e.details.key_version === 2)!;
      assert.equal(byVersion.actor, 'client:pcl_x');
      assert.equal(byVersion.ip, '127.0.0.1');
      assert.deepEqual(byVersion.details, {
        connector_id: c.id,
        key_version: 2,
        previous_version: 1,
        client_id: 'pcl_x',
        token_id: 'jti-1',
      });
    });

    it('honours an If-Match predicate on the current version', async () => {
      const c = await server.ctx.connectors.create(
        { companyId, name: 'IfMatch', type: 'webhook', url: 'https://i.example' },
        CLI,
      );
      await assert.rejects(
        server.ctx.connectors.rotateKey(
          { companyId, connectorId: c.id, apiKey: testKey(), ifMatch: (v) => v === 5 },
          CLI,
        ),
        { code: 'precondition_failed', status: 412 },
      );
      const ok = await server.ctx.connectors.rotateKey(
        { companyId, connectorId: c.id, apiKey: testKey(), ifMatch: (v) => v === 0 },
        CLI,
      );
      assert.equal(ok.keyVersion, 1);
    });

    it('binds a sealed key to its company, connector and version (moved or replayed ciphertext fails to open)', async () => {
      const db = server.ctx.store.db;
      const connectors = server.ctx.connectors;
      const a = await connectors.create(
        { companyId, name: 'A', type: 'webhook', url: 'https://a.example', apiKey: testKey('a') },
        CLI,
      );
      const b = await connectors.create(
        { companyId, name: 'B', type: 'webhook', url: 'https://b.example', apiKey: testKey('b') },
        CLI,
      );
      const sealedOf = async (id: string) =>
        (
          await db
            .selectFrom('connectors')
            .select(['api_key_sealed'])
            .where('id', '=', id)
            .executeTakeFirstOrThrow()
        ).api_key_sealed!;

      // Another connector's ciphertext.
      await db
        .updateTable('connectors')
        .set({ api_key_sealed: await sealedOf(a.id) })
        .where('id', '=', b.id)
        .execute();
      await assert.rejects(connectors.readCredentials(companyId, b.id), { code: 'connector_key_unreadable' });

      // An older version of the same connector's key, replayed (e.g. from a backup) under the current version.
      const v1 = await sealedOf(a.id);
      await connectors.rotateKey({ companyId, connectorId: a.id, apiKey: testKey('a2') }, CLI);
      await db.updateTable('connectors').set({ api_key_sealed: v1 }).where('id', '=', a.id).execute();
      await assert.rejects(connectors.readCredentials(companyId, a.id), { code: 'connector_key_unreadable' });

      // Setting a new key repairs the connector.
      const fresh = testKey('fresh');
      await connectors.rotateKey({ companyId, connectorId: a.id, apiKey: fresh }, CLI);
      assert.equal((await connectors.readCredentials(companyId, a.id)).apiKey, fresh);
    });

    it('reports an unset key, and deletes only within the company', async () => {
      const c = await server.ctx.connectors.create(
        { companyId, name: 'Del', type: 'webhook', url: 'https://d.example' },
        CLI,
      );
      await assert.rejects(server.ctx.connectors.readCredentials(companyId, c.id), {
        code: 'connector_key_not_set',
      });
      await assert.rejects(server.ctx.connectors.delete(otherCompanyId, c.id, CLI), {
        code: 'connector_not_found',
      });
      await assert.rejects(server.ctx.connectors.delete(companyId, UNKNOWN, CLI), {
        code: 'connector_not_found',
      });
      await server.ctx.connectors.delete(companyId, c.id, CLI);
      assert.equal(await server.ctx.connectors.find(companyId, c.id), undefined);
      const events = await server.ctx.audit.list({ companyId, type: 'connector.deleted', subject: c.id });
      assert.equal(events.length, 1);
    });
  });
}
