import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { http } from '@parley/testing/http-client';
import { athOf, type DpopKey, makeDpopKey, type ProofClaims } from '@parley/testing/oauth/dpop-fixtures';
import { basicAuth, claimsOf, postToken, type TestClient } from '@parley/testing/oauth/oauth-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { exportJWK, generateKeyPair } from 'jose';
import { TOKEN_PATH } from './token.routes.ts';

const WHOAMI = '/platform/v1/auth/whoami';
const GRANT = 'grant_type=client_credentials';

async function createClient(server: TestServer, dpop?: 'optional' | 'required'): Promise<TestClient> {
  const companyId = (await server.ctx.companies.create('DPoP Co')).id;
  const { client, secret } = await server.ctx.oauth.clients.createAny({
    companyId,
    name: 'DPoP client',
    scopes: ['connector:read'],
    dpop,
  });
  return { companyId, clientId: client.clientId, secret: secret!, scopes: ['connector:read'] };
}

/** A token request with the given proof (or none). */
const grant = (server: TestServer, client: TestClient, proof?: string) =>
  postToken(server, GRANT, {
    authorization: basicAuth(client.clientId, client.secret),
    ...(proof ? { dpop: proof } : {}),
  });

/** A protected call with `Authorization: <scheme> <token>` and the proof, if any. */
const call = (server: TestServer, scheme: string, token: string, proof?: string) =>
  http(`${server.baseUrl}${WHOAMI}`, {
    headers: { authorization: `${scheme} ${token}`, ...(proof ? { dpop: proof } : {}) },
  });

for (const database of TEST_DATABASES) {
  describe(`DPoP sender-constrained tokens (RFC 9449) (${database})`, () => {
    let server: TestServer;
    let peer: TestServer;
    let client: TestClient;
    let key: DpopKey;
    const tokenUri = () => `${server.config.publicUrl}${TOKEN_PATH}`;
    const whoamiUri = () => `${server.config.publicUrl}${WHOAMI}`;
    const tokenProof = (claims: ProofClaims = {}) => key.proof({ htu: tokenUri(), ...claims });
    const resourceProof = (token: string, claims: ProofClaims = {}) =>
      key.proof({ htm: 'GET', htu: whoamiUri(), ath: athOf(token), ...claims });

    before(async () => {
      server = await startTestServer({ database });
      peer = await startTestServer({ database, config: server.config, shareWith: server });
      client = await createClient(server);
      key = await makeDpopKey('ES256');
    });
    after(async () => {
      await peer?.close();
      await server?.close();
    });

    it('binds the token to the proof key: token_type DPoP, cnf.jkt the RFC 7638 thumbprint', async () => {
      const result = await grant(server, client, await tokenProof());
      assert.equal(result.status, 200, result.text);
      assert.equal(result.body.token_type, 'DPoP');
      assert.deepEqual(claimsOf(result.body.access_token).cnf, { jkt: key.jkt });
    });

    it('issues a Bearer token without a proof to an optional client', async () => {
      const result = await grant(server, client);
      assert.equal(result.status, 200, result.text);
      assert.equal(result.body.token_type, 'Bearer');
      assert.equal(claimsOf(result.body.access_token).cnf, undefined);
    });

    it('binds with every allowed algorithm (ES256, RS256, PS256, EdDSA)', async () => {
      for (const alg of ['RS256', 'PS256', 'EdDSA'] as const) {
        const other = await makeDpopKey(alg);
        const result = await grant(server, client, await other.proof({ htu: tokenUri() }));
        assert.equal(result.status, 200, `${alg}: ${result.text}`);
        assert.deepEqual(claimsOf(result.body.access_token).cnf, { jkt: other.jkt });
      }
    });

    it('accepts an htu with a query and normalised case, as RFC 9449 §4.3 compares it', async () => {
      const upper = tokenUri().replace('http://', 'HTTP://');
      const result = await grant(server, client, await tokenProof({ htu: `${upper}?x=1#f` }));
      assert.equal(result.status, 200, result.text);
    });

    it('refuses invalid proofs at the token endpoint with 400 invalid_dpop_proof', async () => {
      const stranger = await makeDpopKey('ES256');
      const hmacKey = new TextEncoder().encode('0123456789abcdef0123456789abcdef');
      const { SignJWT } = await import('jose');
      const privateJwk = await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey);
      const now = Math.floor(Date.now() / 1000);
      const cases: Record<string, string> = {
        'wrong typ': await tokenProof({ typ: 'JWT' }),
        'wrong htm': await tokenProof({ htm: 'GET' }),
        'wrong htu': await tokenProof({ htu: `${server.config.publicUrl}/elsewhere` }),
        'iat too old': await tokenProof({ iat: now - 600 }),
        'iat in the future': await tokenProof({ iat: now + 600 }),
        'key not the signer': await tokenProof({ jwk: stranger.jwk }),
        'private jwk in the header': await tokenProof({ jwk: privateJwk }),
        'HMAC alg': await new SignJWT({ htm: 'POST', htu: tokenUri(), jti: 'x', iat: now })
          .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: stranger.jwk })
          .sign(hmacKey),
        'not a JWS': 'not-a-proof',
      };
      for (const [name, proof] of Object.entries(cases)) {
        const result = await grant(server, client, proof);
        assert.equal(result.status, 400, `${name}: ${result.text}`);
        assert.equal(result.body.error, 'invalid_dpop_proof', name);
      }
    });

    it('checks every signature against the header key also once that key is known (kept imported by header)', async () => {
      const known = await makeDpopKey('ES256');
      const first = await grant(server, client, await known.proof({ htu: tokenUri() }));
      assert.equal(first.status, 200, first.text);
      // The same protected header bytes (alg, typ, the known jwk) as the accepted proof, signed by another key.
      const forged = await tokenProof({ jwk: known.jwk });
      assert.equal(forged.split('.')[0], (await known.proof({ htu: tokenUri() })).split('.')[0]);
      const refused = await grant(server, client, forged);
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.body.error, 'invalid_dpop_proof');
      const again = await grant(server, client, await known.proof({ htu: tokenUri() }));
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(claimsOf(again.body.access_token).cnf, { jkt: known.jkt });
    });

    it('accepts a proof jti once across the cluster: replay at the same node or another is refused', async () => {
      const proof = await tokenProof();
      assert.equal((await grant(server, client, proof)).status, 200);
      const again = await grant(server, client, proof);
      assert.equal(again.status, 400);
      assert.equal(again.body.error, 'invalid_dpop_proof');
      const elsewhere = await grant(peer, client, proof);
      assert.equal(elsewhere.status, 400);
      assert.equal(elsewhere.body.error, 'invalid_dpop_proof');
    });

    it('refuses a token request without a proof from a client whose DPoP is required', async () => {
      const strict = await createClient(server, 'required');
      const result = await grant(server, strict);
      assert.equal(result.status, 400);
      assert.equal(result.body.error, 'invalid_dpop_proof');
      assert.equal((await grant(server, strict, await tokenProof())).status, 200);
    });

    it('accepts the bound token with Authorization: DPoP and a proof carrying ath, on every node', async () => {
      const token = (await grant(server, client, await tokenProof())).body.access_token;
      const here = await call(server, 'DPoP', token, await resourceProof(token));
      assert.equal(here.status, 200, here.text);
      assert.equal(here.body.client_id, client.clientId);
      const there = await call(peer, 'DPoP', token, await resourceProof(token));
      assert.equal(there.status, 200, there.text);
    });

    it('refuses the bound token as Bearer, with a DPoP challenge', async () => {
      const token = (await grant(server, client, await tokenProof())).body.access_token;
      const result = await call(server, 'Bearer', token);
      assert.equal(result.status, 401);
      assert.equal(result.body.code, 'invalid_token');
      assert.match(
        result.headers.get('www-authenticate')!,
        /^DPoP .*error="invalid_token".*algs="ES256 RS256 PS256 EdDSA"/,
      );
    });

    it('refuses protected calls whose proof is missing, replayed, for another request or another key', async () => {
      const token = (await grant(server, client, await tokenProof())).body.access_token;
      const used = await resourceProof(token);
      assert.equal((await call(server, 'DPoP', token, used)).status, 200);
      const stranger = await makeDpopKey('ES256');
      const cases: Record<string, string | undefined> = {
        'no proof': undefined,
        'replayed proof': used,
        'replayed at another node': used,
        'no ath': await key.proof({ htm: 'GET', htu: whoamiUri() }),
        'ath of another token': await resourceProof(token, { ath: athOf(`${token}x`) }),
        'wrong method': await resourceProof(token, { htm: 'POST' }),
        'wrong uri': await resourceProof(token, { htu: tokenUri() }),
        'another key': await stranger.proof({ htm: 'GET', htu: whoamiUri(), ath: athOf(token) }),
      };
      for (const [name, proof] of Object.entries(cases)) {
        const node = name.includes('another node') ? peer : server;
        const result = await call(node, 'DPoP', token, proof);
        assert.equal(result.status, 401, `${name}: ${result.text}`);
        assert.equal(result.body.code, 'invalid_dpop_proof', name);
        assert.match(result.headers.get('www-authenticate')!, /^DPoP .*error="invalid_dpop_proof"/, name);
      }
    });

    it('refuses a Bearer token sent with the DPoP scheme (it is not bound)', async () => {
      const token = (await grant(server, client)).body.access_token;
      const result = await call(server, 'DPoP', token, await resourceProof(token));
      assert.equal(result.status, 401);
      assert.equal(result.body.code, 'invalid_token');
      assert.equal((await call(server, 'Bearer', token)).status, 200);
    });

    it('introspects a bound token as token_type DPoP with its cnf', async () => {
      const token = (await grant(server, client, await tokenProof())).body.access_token;
      const result = await http(`${server.baseUrl}/platform/v1/auth/token/introspect`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: basicAuth(client.clientId, client.secret),
        },
        body: `token=${token}`,
      });
      assert.equal(result.body.active, true, result.text);
      assert.equal(result.body.token_type, 'DPoP');
      assert.deepEqual(result.body.cnf, { jkt: key.jkt });
    });

    it('advertises the proof algorithms in the RFC 8414 metadata', async () => {
      const metadata = await http(`${server.baseUrl}/.well-known/oauth-authorization-server`);
      assert.deepEqual(metadata.body.dpop_signing_alg_values_supported, ['ES256', 'RS256', 'PS256', 'EdDSA']);
    });
  });

  describe(`DPoP server nonces (RFC 9449 §8, §9) (${database})`, () => {
    let server: TestServer;
    let client: TestClient;
    let key: DpopKey;

    before(async () => {
      server = await startTestServer({ database, config: { oauth: { dpopNonce: true } } });
      client = await createClient(server);
      key = await makeDpopKey('ES256');
    });
    after(async () => server?.close());

    it('asks for a nonce with use_dpop_nonce and a DPoP-Nonce header, then accepts the proof carrying it', async () => {
      const htu = `${server.config.publicUrl}${TOKEN_PATH}`;
      const first = await grant(server, client, await key.proof({ htu }));
      assert.equal(first.status, 400);
      assert.equal(first.body.error, 'use_dpop_nonce');
      const nonce = first.headers.get('dpop-nonce');
      assert.ok(nonce);
      const second = await grant(server, client, await key.proof({ htu, nonce }));
      assert.equal(second.status, 200, second.text);
      assert.equal(second.body.token_type, 'DPoP');
      const forged = await grant(server, client, await key.proof({ htu, nonce: `${nonce}x` }));
      assert.equal(forged.body.error, 'use_dpop_nonce');

      const token = second.body.access_token;
      const resource = `${server.config.publicUrl}${WHOAMI}`;
      const bare = await call(
        server,
        'DPoP',
        token,
        await key.proof({ htm: 'GET', htu: resource, ath: athOf(token) }),
      );
      assert.equal(bare.status, 401);
      assert.equal(bare.body.code, 'use_dpop_nonce');
      assert.match(bare.headers.get('www-authenticate')!, /^DPoP .*error="use_dpop_nonce"/);
      assert.ok(bare.headers.get('dpop-nonce'));
      const withNonce = await key.proof({ htm: 'GET', htu: resource, ath: athOf(token), nonce });
      assert.equal((await call(server, 'DPoP', token, withNonce)).status, 200);
    });
  });
}
