import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { AuditLog } from '../audit/audit.service.ts';
import { CompaniesService } from '../companies/companies.service.ts';
import { loadMasterKeys } from '../crypto/master-keys.ts';
import { Sealer } from '../crypto/sealing.ts';
import { ApiClientsService } from './api-clients.service.ts';
import { generateClientId, generateClientSecret } from './credentials.ts';
import { rewrapOAuthSecrets } from './oauth.services.ts';
import { SigningKeyStore } from './signing-keys.ts';

for (const database of TEST_DATABASES) {
  describe(`API clients service (${database})`, () => {
    let server: TestServer;
    let companyId: string;
    let service: ApiClientsService;
    before(async () => {
      server = await startTestServer({ database });
      companyId = (await server.ctx.companies.create('Acme')).id;
      service = server.ctx.oauth.clients;
    });
    after(() => server.close());

    it('stores a peppered HMAC of the secret, and the pepper only sealed by the master key', async () => {
      const { client, secret } = await service.create({
        companyId,
        name: 'Stored',
        scopes: ['connector:read'],
      });
      const row = await server.ctx.store.db
        .selectFrom('api_clients')
        .selectAll()
        .where('id', '=', client.clientId)
        .executeTakeFirstOrThrow();
      assert.notEqual(row.secret_digest, createHash('sha256').update(secret).digest('base64url'));
      assert.ok(!JSON.stringify(row).includes(secret.slice(4, 40)));
      const peppers = await server.ctx.store.db.selectFrom('oauth_peppers').selectAll().execute();
      assert.equal(peppers.length, 1);
      assert.match(peppers[0]!.sealed, /^pse1\./);
      // A copy of the database without the master key cannot check secrets.
      const otherMaster = new Sealer([{ version: 1, key: Buffer.alloc(32, 7) }]);
      const thief = new ApiClientsService(
        server.ctx.store,
        otherMaster,
        new CompaniesService(server.ctx.store.db),
        new AuditLog(server.ctx.store.db),
      );
      await assert.rejects(thief.authenticate(client.clientId, secret), { code: 'seal_integrity' });
    });

    it('authenticates the right secret and names every failure reason (server-side only)', async () => {
      const { client, secret } = await service.create({
        companyId,
        name: 'Auth',
        scopes: ['connector:write'],
      });
      const ok = await service.authenticate(client.clientId, secret);
      assert.equal(ok.ok, true);
      const reasons = [
        await service.authenticate('nope', secret),
        await service.authenticate(client.clientId, 'pcs_short'),
        await service.authenticate(generateClientId(), secret),
        await service.authenticate(client.clientId, generateClientSecret()),
      ].map((r) => (r.ok ? 'ok' : r.reason));
      assert.deepEqual(reasons, [
        'malformed_client_id',
        'malformed_secret',
        'unknown_client',
        'wrong_secret',
      ]);
      await service.delete(companyId, client.clientId);
      const deleted = await service.authenticate(client.clientId, secret);
      assert.equal(deleted.ok ? 'ok' : deleted.reason, 'deleted_client');
    });

    it('validates name and scopes, and needs an existing company', async () => {
      await assert.rejects(service.create({ companyId, name: ' ', scopes: ['connector:read'] }), {
        code: 'invalid_name',
      });
      await assert.rejects(service.create({ companyId, name: 'x'.repeat(201), scopes: ['connector:read'] }), {
        code: 'invalid_name',
      });
      await assert.rejects(service.create({ companyId, name: 'n', scopes: [] }), { code: 'invalid_scopes' });
      await assert.rejects(service.create({ companyId, name: 'n', scopes: ['admin'] }), {
        code: 'invalid_scopes',
      });
      await assert.rejects(
        service.create({
          companyId: '00000000-0000-4000-8000-000000000000',
          name: 'n',
          scopes: ['connector:read'],
        }),
        { code: 'company_not_found' },
      );
      const ok = await service.create({
        companyId,
        name: `  ${'y'.repeat(200)}  `,
        scopes: ['connector:read', 'connector:read'],
      });
      assert.equal(ok.client.name.length, 200);
      assert.deepEqual(ok.client.scopes, ['connector:read']);
    });

    it('re-wraps the pepper and signing keys under a new master key; secrets and keys keep working', async () => {
      const { client, secret } = await service.create({
        companyId,
        name: 'Rewrap',
        scopes: ['connector:read'],
      });
      const v1 = loadMasterKeys(undefined, server.dataDir).keys;
      const both = new Sealer([{ version: 2, key: Buffer.alloc(32, 9) }, ...v1]);
      assert.deepEqual(await rewrapOAuthSecrets(server.ctx.store, both), { peppers: 1, signingKeys: 1 });
      assert.deepEqual(await rewrapOAuthSecrets(server.ctx.store, both), { peppers: 0, signingKeys: 0 });
      // Only the new master key from now on: the pepper and the signing key still open.
      const onlyV2 = new Sealer([{ version: 2, key: Buffer.alloc(32, 9) }]);
      const db = server.ctx.store.db;
      const fresh = new ApiClientsService(
        server.ctx.store,
        onlyV2,
        new CompaniesService(db),
        new AuditLog(db),
      );
      assert.equal((await fresh.authenticate(client.clientId, secret)).ok, true);
      const keys = new SigningKeyStore(db, onlyV2, new AuditLog(db), {
        alg: 'ES256',
        reloadIntervalMs: 60_000,
      });
      await keys.reload();
      assert.ok(keys.signingKey().privateKey);
    });

    it('two processes needing the pepper at once agree on one', async () => {
      const fresh = await startTestServer({ database });
      try {
        const company = (await fresh.ctx.companies.create('Race')).id;
        const a = new ApiClientsService(
          fresh.ctx.store,
          fresh.ctx.sealer,
          fresh.ctx.companies,
          fresh.ctx.audit,
        );
        const b = new ApiClientsService(
          fresh.ctx.store,
          fresh.ctx.sealer,
          fresh.ctx.companies,
          fresh.ctx.audit,
        );
        const [fromA, fromB] = await Promise.all([
          a.create({ companyId: company, name: 'A', scopes: ['connector:read'] }),
          b.create({ companyId: company, name: 'B', scopes: ['connector:read'] }),
        ]);
        assert.equal((await b.authenticate(fromA.client.clientId, fromA.secret)).ok, true);
        assert.equal((await a.authenticate(fromB.client.clientId, fromB.secret)).ok, true);
        assert.equal((await fresh.ctx.store.db.selectFrom('oauth_peppers').selectAll().execute()).length, 1);
      } finally {
        await fresh.close();
      }
    });
  });
}
