import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { dropTestSchema, TEST_DATABASES, testPostgresUrl, uniqueSchema } from '@parley/testing/databases';
import { http } from '@parley/testing/http-client';
import {
  bearer,
  createTestClient,
  fetchToken,
  headerOf,
  type TestClient,
} from '@parley/testing/oauth/oauth-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { AuditLog } from '../audit/audit.service.ts';
import type { AppContext } from '../context.ts';
import { loadMasterKeys } from '../crypto/master-keys.ts';
import { Sealer } from '../crypto/sealing.ts';
import { openStore } from '../storage/database.ts';
import { migrateToLatest } from '../storage/migrate.ts';
import { KEY_RETENTION_SECONDS, SigningKeyStore } from './signing-keys.ts';
import { TOKEN_PATH } from './token.routes.ts';

const WHOAMI = '/platform/v1/auth/whoami';

/** Another node of the same deployment: same database, same public URL (so the same `iss` and `aud`). */
const sameDeployment = (server: TestServer, oauth: Record<string, unknown> = {}) => ({
  publicUrl: server.config.publicUrl,
  oauth: { audience: server.config.oauth.audience, ...oauth },
});

const jwksOf = async (server: TestServer) => (await http(`${server.baseUrl}/.well-known/jwks.json`)).body;
const whoami = (server: TestServer, token: string) => http(`${server.baseUrl}${WHOAMI}`, bearer(token));

/** A key store that shares only the database with the servers: what another process (CLI, node) would be. */
function outsideStore(ctx: AppContext, alg: 'ES256' | 'RS256' = 'ES256'): SigningKeyStore {
  return new SigningKeyStore(ctx.store.db, ctx.sealer, ctx.audit, { alg, reloadIntervalMs: 60_000 });
}

for (const database of TEST_DATABASES) {
  describe(`signing keys (${database})`, () => {
    let server: TestServer;
    let client: TestClient;
    before(async () => {
      server = await startTestServer({ database });
      client = await createTestClient(server.ctx, ['connector:read']);
    });
    after(() => server.close());

    it('creates one active key at first start, sealed at rest, and keeps it across restarts', async () => {
      const keys = await server.ctx.oauth.keys.list();
      assert.equal(keys.length, 1);
      assert.equal(keys[0]!.status, 'active');
      assert.equal(keys[0]!.alg, 'ES256');
      const row = await server.ctx.store.db
        .selectFrom('oauth_signing_keys')
        .selectAll()
        .executeTakeFirstOrThrow();
      assert.match(row.private_key, /^pse1\./);
      assert.ok(!row.private_key.includes('PRIVATE KEY'));
      const created = await server.ctx.audit.list({ type: 'signing_key.created' });
      assert.equal(created.length, 1);
      assert.equal(created[0]!.subject, keys[0]!.kid);

      const restarted = await startTestServer({ database, shareWith: server });
      try {
        assert.deepEqual(
          (await jwksOf(restarted)).keys.map((k: { kid: string }) => k.kid),
          [keys[0]!.kid],
        );
        assert.equal((await restarted.ctx.oauth.keys.list()).length, 1);
      } finally {
        await restarted.close();
      }
    });

    it('publishes the JWKS and RFC 8414 metadata that match the tokens', async () => {
      const jwksResult = await http(`${server.baseUrl}/.well-known/jwks.json`);
      assert.equal(jwksResult.status, 200);
      assert.match(jwksResult.headers.get('cache-control') ?? '', /max-age=\d+/);
      const [jwk] = jwksResult.body.keys;
      assert.deepEqual(Object.keys(jwk).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
      assert.equal(jwk.use, 'sig');
      assert.ok(!('d' in jwk), 'no private member');

      const meta = await http(`${server.baseUrl}/.well-known/oauth-authorization-server`);
      assert.equal(meta.status, 200);
      assert.deepEqual(meta.body, {
        issuer: server.config.publicUrl,
        token_endpoint: `${server.config.publicUrl}${TOKEN_PATH}`,
        jwks_uri: `${server.config.publicUrl}/.well-known/jwks.json`,
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: [
          'client_secret_basic',
          'client_secret_post',
          'private_key_jwt',
        ],
        token_endpoint_auth_signing_alg_values_supported: ['ES256', 'RS256', 'PS256', 'EdDSA'],
        revocation_endpoint: `${server.config.publicUrl}/platform/v1/auth/token/revoke`,
        revocation_endpoint_auth_methods_supported: [
          'client_secret_basic',
          'client_secret_post',
          'private_key_jwt',
        ],
        revocation_endpoint_auth_signing_alg_values_supported: ['ES256', 'RS256', 'PS256', 'EdDSA'],
        introspection_endpoint: `${server.config.publicUrl}/platform/v1/auth/token/introspect`,
        introspection_endpoint_auth_methods_supported: [
          'client_secret_basic',
          'client_secret_post',
          'private_key_jwt',
        ],
        introspection_endpoint_auth_signing_alg_values_supported: ['ES256', 'RS256', 'PS256', 'EdDSA'],
        dpop_signing_alg_values_supported: ['ES256', 'RS256', 'PS256', 'EdDSA'],
        scopes_supported: [
          'connector:write',
          'connector:read',
          'conversations:read',
          'conversations:write',
          'webhooks:read',
          'webhooks:write',
          'privacy:write',
          'knowledge:read',
          'knowledge:write',
          'digital_employees:read',
          'digital_employees:write',
        ],
        response_types_supported: [],
        service_documentation: `${server.config.publicUrl}/docs`,
      });
      const token = await fetchToken(server, client);
      const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
      assert.equal(claims.iss, meta.body.issuer);
      assert.equal(headerOf(token).kid, jwk.kid);
    });

    it('rotation signs new tokens with a new key and keeps old tokens valid', async () => {
      const oldToken = await fetchToken(server, client);
      const oldKid = headerOf(oldToken).kid as string;
      const rotated = await server.ctx.oauth.keys.rotate('test');
      assert.equal(rotated.previousKid, oldKid);
      assert.notEqual(rotated.kid, oldKid);

      const newToken = await fetchToken(server, client);
      assert.equal(headerOf(newToken).kid, rotated.kid);
      assert.deepEqual(
        (await jwksOf(server)).keys.map((k: { kid: string }) => k.kid),
        [rotated.kid, oldKid],
      );
      assert.equal((await whoami(server, oldToken)).status, 200);
      assert.equal((await whoami(server, newToken)).status, 200);

      const listed = await server.ctx.oauth.keys.list();
      assert.deepEqual(
        listed.map((k) => [k.kid, k.status, k.published]),
        [
          [rotated.kid, 'active', true],
          [oldKid, 'retired', true],
        ],
      );
      const [event] = await server.ctx.audit.list({ type: 'signing_key.rotated', limit: 1 });
      assert.deepEqual(event!.details, { kid: rotated.kid, alg: 'ES256', previous_kid: oldKid });
      assert.equal(event!.actor, 'test');
    });

    it('drops a retired key once every token it signed has expired, and deletes it at the next rotation', async () => {
      const { keys } = server.ctx.oauth;
      const token = await fetchToken(server, client);
      const kid = headerOf(token).kid as string;
      await keys.rotate();
      // Pretend the rotation happened longer ago than the token lifetime + margins.
      const longAgo = new Date(Date.now() - (KEY_RETENTION_SECONDS + 60) * 1000).toISOString();
      await server.ctx.store.db
        .updateTable('oauth_signing_keys')
        .set({ retired_at: longAgo })
        .where('kid', '=', kid)
        .execute();
      await keys.reload();
      const published = (await jwksOf(server)).keys.map((k: { kid: string }) => k.kid);
      assert.ok(!published.includes(kid));
      const result = await whoami(server, token);
      assert.equal(result.status, 401);
      assert.equal((await keys.list()).find((k) => k.kid === kid)?.published, false);
      await keys.rotate();
      assert.equal(
        (await keys.list()).find((k) => k.kid === kid),
        undefined,
      );
    });

    it('a node notices a rotation made elsewhere: periodically, and at once for a token with an unknown kid', async () => {
      const fast = await startTestServer({
        database,
        shareWith: server,
        config: sameDeployment(server, { keyReloadIntervalMs: 100 }),
      });
      const slow = await startTestServer({
        database,
        shareWith: server,
        config: sameDeployment(server, { keyReloadIntervalMs: 300_000 }),
      });
      try {
        const kidOf = async (s: TestServer) => headerOf(await fetchToken(s, client)).kid;
        const before = await kidOf(slow);
        const rotated = await outsideStore(server.ctx).rotate('cli');
        // The fast node reloads on its timer and signs with the new key.
        await waitFor(
          'the fast node to sign with the new key',
          async () => (await kidOf(fast)) === rotated.kid,
        );
        // The slow node has not reloaded: it still signs with the old key and does not publish the new one…
        assert.equal(await kidOf(slow), before);
        assert.ok(!(await jwksOf(slow)).keys.some((k: { kid: string }) => k.kid === rotated.kid));
        // …until it meets a token with the unknown kid, which makes it reload before verifying.
        const fromFast = await fetchToken(fast, client);
        assert.equal((await whoami(slow, fromFast)).status, 200);
        assert.ok((await jwksOf(slow)).keys.some((k: { kid: string }) => k.kid === rotated.kid));
        assert.equal(await kidOf(slow), rotated.kid);
      } finally {
        await fast.close();
        await slow.close();
      }
    });

    it('keeps each key’s algorithm: an ES256 key stays ES256 after the config switches to RS256', async () => {
      const esToken = await fetchToken(server, client);
      assert.equal(headerOf(esToken).alg, 'ES256');
      const rsNode = await startTestServer({
        database,
        shareWith: server,
        config: sameDeployment(server, { signingAlg: 'RS256' }),
      });
      try {
        assert.equal(headerOf(await fetchToken(rsNode, client)).alg, 'ES256');
        const rotated = await rsNode.ctx.oauth.keys.rotate();
        assert.equal(rotated.alg, 'RS256');
        const rsToken = await fetchToken(rsNode, client);
        assert.deepEqual(headerOf(rsToken), { alg: 'RS256', typ: 'at+jwt', kid: rotated.kid });
        const rsJwk = (await jwksOf(rsNode)).keys.find((k: { kid: string }) => k.kid === rotated.kid);
        assert.equal(rsJwk.kty, 'RSA');
        assert.equal(rsJwk.alg, 'RS256');
        assert.equal((await whoami(rsNode, rsToken)).status, 200);
        assert.equal((await whoami(rsNode, esToken)).status, 200);
      } finally {
        await rsNode.close();
      }
    });
  });

  describe(`signing keys under concurrent first start (${database})`, () => {
    it('several processes starting at once create exactly one active key', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'parley-keys-'));
      const schema = database === 'postgres' ? uniqueSchema() : undefined;
      const databaseUrl = database === 'postgres' ? testPostgresUrl() : undefined;
      // The first open creates the schema; the other three connect to it (concurrent CREATE SCHEMA can race).
      const first = await openStore({ databaseUrl, dataDir, schema });
      const others = await Promise.all(
        Array.from({ length: 3 }, () => openStore({ databaseUrl, dataDir, schema })),
      );
      const stores = [first, ...others];
      try {
        await migrateToLatest(stores[0]!);
        const sealer = new Sealer(loadMasterKeys(undefined, dataDir).keys);
        const keyStores = stores.map(
          (store) =>
            new SigningKeyStore(store.db, sealer, new AuditLog(store.db), {
              alg: 'ES256',
              reloadIntervalMs: 60_000,
            }),
        );
        await Promise.all(keyStores.map((k) => k.start()));
        for (const k of keyStores) k.stop();
        const rows = await stores[0]!.db.selectFrom('oauth_signing_keys').selectAll().execute();
        assert.equal(rows.length, 1);
        assert.equal(rows[0]!.status, 'active');
        const kids = new Set(keyStores.map((k) => k.signingKey().kid));
        assert.deepEqual([...kids], [rows[0]!.kid]);
        const audit = await new AuditLog(stores[0]!.db).list({ type: 'signing_key.created' });
        assert.equal(audit.length, 1);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
        rmSync(dataDir, { recursive: true, force: true });
        if (schema) await dropTestSchema(schema);
      }
    });

    it('two racing rotations leave exactly one active key', async () => {
      const server = await startTestServer({ database });
      try {
        const results = await Promise.allSettled([
          outsideStore(server.ctx).rotate(),
          outsideStore(server.ctx).rotate(),
        ]);
        assert.ok(results.some((r) => r.status === 'fulfilled'));
        const active = await server.ctx.store.db
          .selectFrom('oauth_signing_keys')
          .select('kid')
          .where('status', '=', 'active')
          .execute();
        assert.equal(active.length, 1);
      } finally {
        await server.close();
      }
    });
  });
}
