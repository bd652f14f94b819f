import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { type HttpResult, http } from '@parley/testing/http-client';
import {
  basicAuth,
  claimsOf,
  createTestClient,
  FORM,
  headerOf,
  postToken,
  type TestClient,
} from '@parley/testing/oauth/oauth-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { generateClientId, generateClientSecret } from './credentials.ts';
import { TOKEN_PATH } from './token.routes.ts';

const GRANT = 'grant_type=client_credentials';

function assertOAuthError(result: HttpResult, status: number, error: string): void {
  assert.equal(result.status, status, result.text);
  assert.match(result.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(result.body.error, error);
  assert.equal(typeof result.body.error_description, 'string');
  // RFC 6749 §5.2: error_description is printable ASCII without `"` and `\`.
  assert.match(result.body.error_description, /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/);
  assert.deepEqual(Object.keys(result.body).sort(), ['error', 'error_description']);
  assert.equal(result.headers.get('cache-control'), 'no-store');
  assert.equal(result.headers.get('pragma'), 'no-cache');
}

function waitForEvent(server: TestServer, type: string, jti: string) {
  return waitFor(
    `a ${type} event for ${jti}`,
    async () => (await server.ctx.audit.list({ type, limit: 50 })).find((e) => e.details.jti === jti),
    10_000,
    20,
  );
}

function assertInvalidClient(result: HttpResult): void {
  assertOAuthError(result, 401, 'invalid_client');
  assert.equal(result.headers.get('www-authenticate'), 'Basic realm="parley"');
  // One description whatever the cause: no "this client exists" oracle.
  assert.equal(result.body.error_description, 'Client authentication failed.');
}

for (const database of TEST_DATABASES) {
  describe(`token endpoint (${database})`, () => {
    let server: TestServer;
    let client: TestClient;
    let auth: string;

    before(async () => {
      server = await startTestServer({ database });
      client = await createTestClient(server.ctx, ['connector:write', 'connector:read']);
      auth = basicAuth(client.clientId, client.secret);
    });
    after(() => server.close());

    describe('success', () => {
      it('issues an RFC 9068 access token for Basic credentials and a requested scope', async () => {
        const before = Math.floor(Date.now() / 1000);
        const result = await postToken(server, `${GRANT}&scope=connector%3Awrite`, { authorization: auth });
        assert.equal(result.status, 200, result.text);
        assert.equal(result.headers.get('cache-control'), 'no-store');
        assert.equal(result.headers.get('pragma'), 'no-cache');
        assert.deepEqual(Object.keys(result.body).sort(), [
          'access_token',
          'expires_in',
          'scope',
          'token_type',
        ]);
        assert.equal(result.body.token_type, 'Bearer');
        assert.equal(result.body.expires_in, 3600);
        assert.equal(result.body.scope, 'connector:write');
        assert.equal(result.body.refresh_token, undefined);

        const token: string = result.body.access_token;
        const header = headerOf(token);
        const jwks = (await http(`${server.baseUrl}/.well-known/jwks.json`)).body;
        assert.deepEqual(header, { alg: 'ES256', typ: 'at+jwt', kid: jwks.keys[0].kid });
        const claims = claimsOf(token);
        assert.deepEqual(Object.keys(claims).sort(), [
          'aud',
          'client_id',
          'company_id',
          'exp',
          'iat',
          'iss',
          'jti',
          'scope',
          'sub',
        ]);
        assert.equal(claims.iss, server.baseUrl);
        assert.equal(claims.aud, server.config.oauth.audience);
        assert.equal(claims.sub, client.clientId);
        assert.equal(claims.client_id, client.clientId);
        assert.equal(claims.company_id, client.companyId);
        assert.equal(claims.scope, 'connector:write');
        assert.ok((claims.iat as number) >= before && (claims.iat as number) <= before + 5);
        assert.equal(claims.exp, (claims.iat as number) + 3600);
        assert.match(claims.jti as string, /^[A-Za-z0-9_-]{22}$/);

        // token.issued is written in batches (AuditBatcher): it lands within moments, without any flush.
        const event = await waitForEvent(server, 'token.issued', claims.jti as string);
        assert.equal(event!.companyId, client.companyId);
        assert.equal(event!.ip, '127.0.0.1');
        assert.deepEqual(event!.details.scopes, ['connector:write']);
        assert.equal(event!.details.jti, claims.jti);
        assert.equal(event!.actor, `client:${client.clientId}`);
      });

      it('grants every scope of the client when scope is omitted, and says so', async () => {
        const result = await postToken(server, GRANT, { authorization: auth });
        assert.equal(result.status, 200);
        assert.equal(result.body.scope, 'connector:write connector:read');
        assert.equal(claimsOf(result.body.access_token).scope, 'connector:write connector:read');
      });

      it('treats an empty scope parameter as omitted (RFC 6749 §3.1)', async () => {
        const result = await postToken(server, `${GRANT}&scope=`, { authorization: auth });
        assert.equal(result.status, 200);
        assert.equal(result.body.scope, 'connector:write connector:read');
      });

      it('accepts several space-separated scopes (form-encoded as + or %20) and drops repeats', async () => {
        const plus = await postToken(
          server,
          `${GRANT}&scope=connector%3Aread+connector%3Awrite+connector%3Aread`,
          {
            authorization: auth,
          },
        );
        assert.equal(plus.status, 200);
        assert.equal(plus.body.scope, 'connector:read connector:write');
        const pct = await postToken(server, `${GRANT}&scope=connector:read%20connector:write`, {
          authorization: auth,
        });
        assert.equal(pct.body.scope, 'connector:read connector:write');
      });

      it('form-decodes Basic credentials (RFC 6749 App. B) and accepts unpadded base64', async () => {
        const encoded = `${client.clientId.replace('p', '%70')}:${client.secret.replace('p', '%70')}`;
        const decoded = await postToken(server, GRANT, {
          authorization: `Basic ${Buffer.from(encoded).toString('base64')}`,
        });
        assert.equal(decoded.status, 200, decoded.text);
        const unpadded = auth.replace(/=+$/, '');
        assert.notEqual(unpadded, auth);
        assert.equal((await postToken(server, GRANT, { authorization: unpadded })).status, 200);
        const lowerScheme = await postToken(server, GRANT, { authorization: auth.replace('Basic', 'basic') });
        assert.equal(lowerScheme.status, 200);
      });

      it('accepts body credentials (client_secret_post) and a charset on the content type', async () => {
        const body = `${GRANT}&client_id=${client.clientId}&client_secret=${client.secret}`;
        const result = await postToken(server, body, { 'content-type': `${FORM}; charset=UTF-8` });
        assert.equal(result.status, 200, result.text);
        assert.equal(claimsOf(result.body.access_token).client_id, client.clientId);
      });

      it('accepts a body client_id equal to the Basic client id, and ignores unknown parameters', async () => {
        const result = await postToken(server, `${GRANT}&client_id=${client.clientId}&resource=x&foo=bar`, {
          authorization: auth,
        });
        assert.equal(result.status, 200, result.text);
      });

      it('records when the client was last used', async () => {
        const fresh = await createTestClient(server.ctx, ['connector:read']);
        const { clients } = server.ctx.oauth;
        assert.equal((await clients.find(fresh.clientId))!.lastUsedAt, null);
        await postToken(server, GRANT, { authorization: basicAuth(fresh.clientId, fresh.secret) });
        const used = (await clients.find(fresh.clientId))!.lastUsedAt;
        assert.ok(used && Date.now() - Date.parse(used) < 60_000);
      });
    });

    describe('invalid_request', () => {
      it('without a body or content type', async () => {
        assertOAuthError(await postToken(server, undefined, { authorization: auth }), 400, 'invalid_request');
      });

      it('with a JSON body', async () => {
        const result = await http(`${server.baseUrl}${TOKEN_PATH}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: auth },
          body: JSON.stringify({ grant_type: 'client_credentials' }),
        });
        assertOAuthError(result, 400, 'invalid_request');
      });

      it('with a text/plain body', async () => {
        const result = await postToken(server, GRANT, { authorization: auth, 'content-type': 'text/plain' });
        assertOAuthError(result, 400, 'invalid_request');
      });

      it('when a parameter appears twice (RFC 6749 §3.1)', async () => {
        assertOAuthError(
          await postToken(server, `${GRANT}&${GRANT}`, { authorization: auth }),
          400,
          'invalid_request',
        );
        const twoScopes = await postToken(server, `${GRANT}&scope=connector:read&scope=connector:write`, {
          authorization: auth,
        });
        assertOAuthError(twoScopes, 400, 'invalid_request');
        assert.match(twoScopes.body.error_description, /scope/);
      });

      it('when the body has a malformed percent-encoding', async () => {
        assertOAuthError(
          await postToken(server, `${GRANT}&scope=%E0%A4%A`, { authorization: auth }),
          400,
          'invalid_request',
        );
      });

      it('when grant_type is missing', async () => {
        assertOAuthError(
          await postToken(server, 'scope=connector:read', { authorization: auth }),
          400,
          'invalid_request',
        );
      });

      it('when Basic and body secret are both used (two methods)', async () => {
        const result = await postToken(server, `${GRANT}&client_secret=${client.secret}`, {
          authorization: auth,
        });
        assertOAuthError(result, 400, 'invalid_request');
      });

      it('when the body client_id differs from the Basic one', async () => {
        const result = await postToken(server, `${GRANT}&client_id=${generateClientId()}`, {
          authorization: auth,
        });
        assertOAuthError(result, 400, 'invalid_request');
      });

      it('when the Authorization header is not Basic', async () => {
        assertOAuthError(
          await postToken(server, GRANT, { authorization: 'Bearer abc' }),
          400,
          'invalid_request',
        );
      });

      it('when the Basic value is not base64', async () => {
        assertOAuthError(
          await postToken(server, GRANT, { authorization: 'Basic ***' }),
          400,
          'invalid_request',
        );
        assertOAuthError(
          await postToken(server, GRANT, { authorization: 'Basic QQ=' }),
          400,
          'invalid_request',
        );
      });

      it('when the Basic value has no colon', async () => {
        const noColon = `Basic ${Buffer.from(client.clientId).toString('base64')}`;
        assertOAuthError(await postToken(server, GRANT, { authorization: noColon }), 400, 'invalid_request');
      });

      it('when the Basic credentials have a malformed percent-encoding', async () => {
        const bad = `Basic ${Buffer.from(`${client.clientId}:%zz${client.secret}`).toString('base64')}`;
        assertOAuthError(await postToken(server, GRANT, { authorization: bad }), 400, 'invalid_request');
      });

      it('when the Basic secret is empty', async () => {
        const empty = `Basic ${Buffer.from(`${client.clientId}:`).toString('base64')}`;
        assertOAuthError(await postToken(server, GRANT, { authorization: empty }), 400, 'invalid_request');
      });

      it('when client_secret is in the body without client_id', async () => {
        assertOAuthError(
          await postToken(server, `${GRANT}&client_secret=${client.secret}`),
          400,
          'invalid_request',
        );
      });

      it('when the body is too large', async () => {
        const result = await postToken(server, `${GRANT}&pad=${'x'.repeat(20_000)}`, { authorization: auth });
        assertOAuthError(result, 400, 'invalid_request');
      });
    });

    describe('unsupported_grant_type', () => {
      it('for any grant other than client_credentials', async () => {
        for (const grant of ['authorization_code', 'password', 'refresh_token', 'client_credential']) {
          const result = await postToken(server, `grant_type=${grant}`, { authorization: auth });
          assertOAuthError(result, 400, 'unsupported_grant_type');
        }
      });
    });

    describe('invalid_client', () => {
      it('without any client authentication', async () => {
        assertInvalidClient(await postToken(server, GRANT));
        assertInvalidClient(await postToken(server, `${GRANT}&client_id=${client.clientId}`));
      });

      it('for an unknown client id', async () => {
        assertInvalidClient(
          await postToken(server, GRANT, { authorization: basicAuth(generateClientId(), client.secret) }),
        );
      });

      it('for a wrong secret (well-formed, with a valid checksum)', async () => {
        const other = generateClientSecret();
        assertInvalidClient(
          await postToken(server, GRANT, { authorization: basicAuth(client.clientId, other) }),
        );
      });

      it('for a secret that fails its checksum', async () => {
        const typo = `${client.secret.slice(0, -7)}${client.secret.at(-7) === 'a' ? 'b' : 'a'}${client.secret.slice(-6)}`;
        assertInvalidClient(
          await postToken(server, GRANT, { authorization: basicAuth(client.clientId, typo) }),
        );
      });

      it('for a client id of the wrong shape', async () => {
        assertInvalidClient(
          await postToken(server, GRANT, { authorization: basicAuth('admin', client.secret) }),
        );
      });

      it('for a wrong body secret', async () => {
        const body = `${GRANT}&client_id=${client.clientId}&client_secret=${generateClientSecret()}`;
        assertInvalidClient(await postToken(server, body));
      });

      it('for a deleted client, even with its right secret', async () => {
        const doomed = await createTestClient(server.ctx, ['connector:read']);
        const doomedAuth = basicAuth(doomed.clientId, doomed.secret);
        assert.equal((await postToken(server, GRANT, { authorization: doomedAuth })).status, 200);
        await server.ctx.oauth.clients.delete(doomed.companyId, doomed.clientId);
        assertInvalidClient(await postToken(server, GRANT, { authorization: doomedAuth }));
      });

      it('records every failure with its reason server-side, never the secret', async () => {
        const probe = generateClientId();
        const wrong = generateClientSecret();
        await postToken(server, GRANT, { authorization: basicAuth(probe, wrong) });
        const [event] = await server.ctx.audit.list({ type: 'client_auth.failed', subject: probe, limit: 1 });
        assert.ok(event);
        assert.equal(event.ip, '127.0.0.1');
        assert.deepEqual(event.details, {
          client_id: probe,
          reason: 'unknown_client',
          method: 'client_secret_basic',
        });
        assert.ok(!JSON.stringify(event).includes(wrong));
        const reasons = (await server.ctx.audit.list({ type: 'client_auth.failed', limit: 1000 })).map(
          (e) => e.details.reason,
        );
        for (const reason of [
          'wrong_secret',
          'malformed_secret',
          'malformed_client_id',
          'deleted_client',
          'no_credentials',
        ]) {
          assert.ok(reasons.includes(reason), `missing ${reason}`);
        }
      });
    });

    describe('invalid_scope', () => {
      it('for a scope the client does not hold', async () => {
        const result = await postToken(server, `${GRANT}&scope=conversations%3Aread`, {
          authorization: auth,
        });
        assertOAuthError(result, 400, 'invalid_scope');
      });

      it('for an unknown scope next to a held one', async () => {
        const result = await postToken(server, `${GRANT}&scope=connector%3Aread+admin`, {
          authorization: auth,
        });
        assertOAuthError(result, 400, 'invalid_scope');
      });

      it('for a scope token with characters RFC 6749 §3.3 forbids', async () => {
        const result = await postToken(server, `${GRANT}&scope=${encodeURIComponent('connector:read "x"')}`, {
          authorization: auth,
        });
        assertOAuthError(result, 400, 'invalid_scope');
      });
    });

    describe('methods', () => {
      it('answers 405 with Allow: POST for other methods', async () => {
        for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
          const result = await http(`${server.baseUrl}${TOKEN_PATH}`, { method });
          assertOAuthError(result, 405, 'invalid_request');
          assert.equal(result.headers.get('allow'), 'POST');
        }
      });
    });
  });
}
