import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliEnvFor } from '@parley/testing/cli';
import { TEST_DATABASES } from '@parley/testing/databases';
import { basicAuth, postToken } from '@parley/testing/oauth/oauth-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { runCli } from '../cli/main.ts';
import { JWT_BEARER_ASSERTION } from './client-assertion.ts';
import { TOKEN_PATH } from './token.routes.ts';

const ALGS = ['ES256', 'RS256', 'PS256', 'EdDSA'] as const;
type Alg = (typeof ALGS)[number];
type Signer = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

for (const database of TEST_DATABASES) {
  describe(`private_key_jwt client authentication (RFC 7523) (${database})`, () => {
    let server: TestServer;
    let companyId: string;
    let clientId: string;
    const privateKeys = new Map<Alg, Signer>();
    const jwks: JWK[] = [];

    const assertion = (
      alg: Alg,
      claims: { aud?: string; iss?: string; sub?: string; expIn?: number; jti?: string } = {},
    ) =>
      new SignJWT({ jti: claims.jti ?? randomUUID() })
        .setProtectedHeader({ alg, kid: `k-${alg}` })
        .setIssuer(claims.iss ?? clientId)
        .setSubject(claims.sub ?? clientId)
        .setAudience(claims.aud ?? `${server.config.publicUrl}${TOKEN_PATH}`)
        .setIssuedAt()
        .setExpirationTime(Math.floor(Date.now() / 1000) + (claims.expIn ?? 60))
        .sign(privateKeys.get(alg)!);
    const grant = (jwt: string, extra = '') =>
      postToken(
        server,
        `grant_type=client_credentials&client_assertion_type=${encodeURIComponent(JWT_BEARER_ASSERTION)}&client_assertion=${jwt}${extra}`,
      );

    before(async () => {
      server = await startTestServer({ database });
      companyId = (await server.ctx.companies.create('Keys Co')).id;
      for (const alg of ALGS) {
        const pair = await generateKeyPair(alg, {
          extractable: true,
          ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}),
        });
        privateKeys.set(alg, pair.privateKey);
        jwks.push({ ...(await exportJWK(pair.publicKey)), kid: `k-${alg}`, alg });
      }
      const file = join(server.dataDir, 'client-jwks.json');
      writeFileSync(file, JSON.stringify({ keys: jwks }));
      const lines: string[] = [];
      const env = await cliEnvFor(server);
      const code = await runCli(
        [
          'api-clients',
          'create',
          '--company',
          companyId,
          '--name',
          'Signer',
          '--scopes',
          'connector:read',
          '--auth-method',
          'private_key_jwt',
          '--jwks-file',
          file,
          '--json',
        ],
        (line) => lines.push(line),
        { env },
      );
      assert.equal(code, 0, lines.join('\n'));
      const created = JSON.parse(lines.join('\n'));
      assert.equal(created.client_secret, undefined, 'such a client has no secret');
      assert.equal(created.auth_method, 'private_key_jwt');
      clientId = created.client_id;
    });
    after(() => server.close());

    for (const alg of ALGS) {
      it(`accepts an assertion signed with ${alg}`, async () => {
        const result = await grant(await assertion(alg));
        assert.equal(result.status, 200, result.text);
        assert.equal(result.body.token_type, 'Bearer');
        assert.equal(result.body.scope, 'connector:read');
      });
    }

    it('accepts the issuer as audience, and a matching client_id parameter', async () => {
      const jwt = await assertion('ES256', { aud: server.config.publicUrl });
      assert.equal((await grant(jwt, `&client_id=${clientId}`)).status, 200);
    });

    it('refuses a replayed jti, a wrong audience, a far exp, an expired one, iss ≠ sub, and another key', async () => {
      const once = await assertion('ES256');
      assert.equal((await grant(once)).status, 200);
      const replay = await grant(once);
      assert.equal(replay.status, 401);
      assert.equal(replay.body.error, 'invalid_client');
      assert.equal((await grant(await assertion('ES256', { aud: 'https://elsewhere.example' }))).status, 401);
      assert.equal((await grant(await assertion('ES256', { expIn: 3600 }))).status, 401);
      assert.equal((await grant(await assertion('ES256', { expIn: -120 }))).status, 401);
      assert.equal(
        (await grant(await assertion('ES256', { sub: 'pcl_0000000000000000000000' }))).status,
        401,
      );
      const stranger = await generateKeyPair('ES256');
      const forged = await new SignJWT({ jti: randomUUID() })
        .setProtectedHeader({ alg: 'ES256', kid: 'k-ES256' })
        .setIssuer(clientId)
        .setSubject(clientId)
        .setAudience(server.config.publicUrl)
        .setExpirationTime('1m')
        .sign(stranger.privateKey);
      assert.equal((await grant(forged)).status, 401);
      const events = await server.ctx.audit.list({ subject: clientId });
      assert.ok(
        events.some((e) => e.type === 'client_auth.failed' && e.details.reason === 'invalid_assertion'),
      );
    });

    it('refuses a wrong assertion type, a mismatching client_id, and mixing methods', async () => {
      const jwt = await assertion('ES256');
      const wrongType = await postToken(
        server,
        `grant_type=client_credentials&client_assertion_type=urn:other&client_assertion=${jwt}`,
      );
      assert.equal(wrongType.status, 400);
      assert.equal(wrongType.body.error, 'invalid_request');
      assert.equal((await grant(jwt, '&client_id=pcl_0000000000000000000000')).status, 400);
      const mixed = await postToken(
        server,
        `grant_type=client_credentials&client_assertion_type=${encodeURIComponent(JWT_BEARER_ASSERTION)}&client_assertion=${jwt}`,
        { authorization: basicAuth(clientId, 'pcs_x') },
      );
      assert.equal(mixed.status, 400);
    });

    it('validates the keys at registration', async () => {
      const svc = server.ctx.oauth.clients;
      const base = {
        companyId,
        name: 'K',
        scopes: ['connector:read'],
        authMethod: 'private_key_jwt' as const,
      };
      await assert.rejects(svc.createAny(base), { code: 'invalid_client_keys' });
      await assert.rejects(svc.createAny({ ...base, jwks: { keys: [] } }), { code: 'invalid_client_keys' });
      const priv = await exportJWK(privateKeys.get('ES256')!);
      await assert.rejects(svc.createAny({ ...base, jwks: { keys: [priv] } }), {
        code: 'invalid_client_keys',
      });
      for (const jwksUri of [
        'http://keys.example/jwks',
        'https://u:p@keys.example/jwks',
        'https://k.example/#f',
      ]) {
        await assert.rejects(svc.createAny({ ...base, jwksUri }), { code: 'invalid_client_keys' }, jwksUri);
      }
      await assert.rejects(svc.createAny({ ...base, jwksUri: 'https://k.example/j', jwks: { keys: jwks } }), {
        code: 'invalid_client_keys',
      });
      await assert.rejects(svc.rotateSecret({ companyId, clientId }), { code: 'wrong_auth_method' });
    });
  });
}
