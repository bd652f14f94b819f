import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  dropTestSchema,
  TEST_DATABASES,
  type TestDatabase,
  testPostgresUrl,
  uniqueSchema,
} from '@parley/testing/databases';
import { type HttpResult, http } from '@parley/testing/http-client';
import {
  basicAuth,
  bearer,
  claimsOf,
  createTestClient,
  postToken,
  type TestClient,
} from '@parley/testing/oauth/oauth-fixtures';
import { buildApp } from '../app.ts';
import { loadConfig } from '../config/load.ts';
import type { Config } from '../config/schema.ts';
import { type AppContext, createContext } from '../context.ts';
import type { App } from '../http/types.ts';
import { createLogger } from '../logging/logger.ts';
import { AccessTokenVerifier, type InvalidAccessTokenError } from './access-tokens.ts';
import { b64url, encodeHeader, signJws } from './jwt.ts';

const WHOAMI = '/platform/v1/auth/whoami';
const SCOPED = '/test/connector-write';

interface ScopedServer {
  baseUrl: string;
  ctx: AppContext;
  config: Config;
  close(): Promise<void>;
}

/**
 * The real app plus one route that needs `connector:write` (the connector routes that will need it live in
 * another capability), listening on 127.0.0.1 like startTestServer.
 */
async function startScopedServer(
  database: TestDatabase,
  oauth: Partial<Config['oauth']> = {},
): Promise<ScopedServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-bearer-'));
  const schema = database === 'postgres' ? uniqueSchema() : undefined;
  const config = loadConfig(
    {},
    {
      port: 0,
      host: '127.0.0.1',
      dataDir,
      logLevel: 'silent',
      ...(database === 'postgres' ? { databaseUrl: testPostgresUrl() } : {}),
      oauth: { ...oauth } as Config['oauth'],
    },
  );
  const ctx = await createContext(config, createLogger('silent'), { schema });
  const { app, start } = await buildApp(ctx);
  addScopedRoute(app);
  app.addHook('onClose', async () => ctx.close());
  await start();
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  const baseUrl = `http://127.0.0.1:${port}`;
  (config as { publicUrl: string }).publicUrl = baseUrl;
  if (!oauth.audience) (config.oauth as { audience: string }).audience = baseUrl;
  return {
    baseUrl,
    ctx,
    config,
    close: async () => {
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
      if (schema) await dropTestSchema(schema);
    },
  };
}

function addScopedRoute(app: App): void {
  app.get(SCOPED, { config: { requiredScope: 'connector:write' } }, async (request) => ({
    company_id: request.principal!.companyId,
  }));
}

function assertBearerProblem(result: HttpResult, status: number, code: string): void {
  assert.equal(result.status, status, result.text);
  assert.match(result.headers.get('content-type') ?? '', /^application\/problem\+json/);
  assert.equal(result.body.code, code);
  assert.equal(result.body.status, status);
}

function assertInvalidToken(result: HttpResult, description = 'The access token is invalid.'): void {
  assertBearerProblem(result, 401, 'invalid_token');
  assert.equal(
    result.headers.get('www-authenticate'),
    `Bearer realm="parley", error="invalid_token", error_description="${description}"`,
  );
}

/** Signs arbitrary header/claims with the server's active key: tokens that are ours but wrong in one way. */
function forge(
  server: ScopedServer,
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
): string {
  const key = server.ctx.oauth.keys.signingKey();
  const fullHeader = { alg: key.alg, typ: 'at+jwt', kid: key.kid, ...header };
  return signJws(b64url(JSON.stringify(fullHeader)), claims, key.alg, key.privateKey);
}

function validClaims(server: ScopedServer, client: TestClient, overrides: Record<string, unknown> = {}) {
  const iat = Math.floor(Date.now() / 1000);
  return {
    iss: server.config.publicUrl,
    sub: client.clientId,
    client_id: client.clientId,
    aud: server.config.oauth.audience,
    scope: 'connector:write',
    company_id: client.companyId,
    iat,
    exp: iat + 3600,
    jti: randomBytes(16).toString('base64url'),
    ...overrides,
  };
}

async function tokenFor(server: ScopedServer, client: TestClient, scope?: string): Promise<string> {
  const body = `grant_type=client_credentials${scope ? `&scope=${scope}` : ''}`;
  const result = await postToken(server, body, { authorization: basicAuth(client.clientId, client.secret) });
  assert.equal(result.status, 200, result.text);
  return result.body.access_token;
}

for (const database of TEST_DATABASES) {
  describe(`bearer auth (${database})`, () => {
    let server: ScopedServer;
    let client: TestClient;
    let token: string;

    before(async () => {
      server = await startScopedServer(database);
      client = await createTestClient(server.ctx, ['connector:write', 'connector:read']);
      token = await tokenFor(server, client);
    });
    after(() => server.close());

    it('whoami answers for the token’s client, company and scopes', async () => {
      const result = await http(`${server.baseUrl}${WHOAMI}`, bearer(token));
      assert.equal(result.status, 200, result.text);
      assert.deepEqual(result.body, {
        client_id: client.clientId,
        company_id: client.companyId,
        scopes: ['connector:write', 'connector:read'],
      });
    });

    it('a token only speaks for its own company', async () => {
      const other = await createTestClient(server.ctx, ['connector:read']);
      const otherToken = await tokenFor(server, other);
      const mine = await http(`${server.baseUrl}${WHOAMI}`, bearer(token));
      const theirs = await http(`${server.baseUrl}${WHOAMI}`, bearer(otherToken));
      assert.equal(mine.body.company_id, client.companyId);
      assert.equal(theirs.body.company_id, other.companyId);
      assert.notEqual(mine.body.company_id, theirs.body.company_id);
      // A company_id claim cannot be swapped without breaking the signature.
      const [h, , s] = token.split('.');
      const swapped = `${h}.${b64url(JSON.stringify({ ...claimsOf(token), company_id: other.companyId }))}.${s}`;
      assertInvalidToken(await http(`${server.baseUrl}${WHOAMI}`, bearer(swapped)));
    });

    it('a route needing a scope accepts a token that carries it', async () => {
      const result = await http(`${server.baseUrl}${SCOPED}`, bearer(token));
      assert.equal(result.status, 200);
      assert.equal(result.body.company_id, client.companyId);
    });

    it('403 insufficient_scope names the needed scope', async () => {
      const readOnly = await tokenFor(server, client, 'connector:read');
      const result = await http(`${server.baseUrl}${SCOPED}`, bearer(readOnly));
      assertBearerProblem(result, 403, 'insufficient_scope');
      assert.equal(
        result.headers.get('www-authenticate'),
        'Bearer realm="parley", error="insufficient_scope", error_description="This request needs the scope connector:write.", scope="connector:write"',
      );
      assert.equal(result.body.required_scope, 'connector:write');
    });

    it('401 with a bare challenge when no credentials are sent', async () => {
      for (const init of [{}, { headers: { authorization: basicAuth(client.clientId, client.secret) } }]) {
        const result = await http(`${server.baseUrl}${WHOAMI}`, init);
        assertBearerProblem(result, 401, 'token_required');
        assert.equal(result.headers.get('www-authenticate'), 'Bearer realm="parley"');
      }
    });

    it('400 invalid_request for a malformed Authorization header', async () => {
      for (const header of ['Bearer', 'Bearer ', 'Bearer a b', 'Bearer tok*en', `Bearer ${token},${token}`]) {
        const result = await http(`${server.baseUrl}${WHOAMI}`, { headers: { authorization: header } });
        assertBearerProblem(result, 400, 'invalid_request');
        assert.match(
          result.headers.get('www-authenticate') ?? '',
          /^Bearer realm="parley", error="invalid_request"/,
        );
      }
    });

    it('400 invalid_request for a token in the query string (only the header is accepted)', async () => {
      const result = await http(`${server.baseUrl}${WHOAMI}?access_token=${token}`);
      assertBearerProblem(result, 400, 'invalid_request');
      const both = await http(`${server.baseUrl}${WHOAMI}?access_token=${token}`, bearer(token));
      assertBearerProblem(both, 400, 'invalid_request');
    });

    it('401 invalid_token for garbage, a tampered payload and a cut signature', async () => {
      const [h, p, s] = token.split('.');
      const tampered = `${h}.${b64url(JSON.stringify({ ...claimsOf(token), scope: 'conversations:write' }))}.${s}`;
      for (const bad of [
        'abc',
        'a.b.c',
        `${h}.${p}`,
        tampered,
        `${h}.${p}.${s!.slice(0, -4)}`,
        `${h}.${p}.${b64url('x')}`,
      ]) {
        assertInvalidToken(await http(`${server.baseUrl}${WHOAMI}`, bearer(bad)));
      }
    });

    it('401 invalid_token unless typ is at+jwt (RFC 9068 §4)', async () => {
      for (const typ of ['JWT', 'jwt', undefined]) {
        const forged = forge(server, validClaims(server, client), { typ });
        assertInvalidToken(await http(`${server.baseUrl}${WHOAMI}`, bearer(forged)));
      }
      const fullType = forge(server, validClaims(server, client), { typ: 'application/at+jwt' });
      assert.equal((await http(`${server.baseUrl}${WHOAMI}`, bearer(fullType))).status, 200);
    });

    it('401 invalid_token when alg is not the one bound to the kid (none, HS256, RS256)', async () => {
      const key = server.ctx.oauth.keys.signingKey();
      const claims = b64url(JSON.stringify(validClaims(server, client)));
      const none = `${b64url(JSON.stringify({ alg: 'none', typ: 'at+jwt', kid: key.kid }))}.${claims}.`;
      assertInvalidToken(await http(`${server.baseUrl}${WHOAMI}`, bearer(`${none}AAAA`)));
      for (const alg of ['HS256', 'RS256', 'ES384']) {
        const forged = forge(server, validClaims(server, client), { alg });
        assertInvalidToken(await http(`${server.baseUrl}${WHOAMI}`, bearer(forged)));
      }
    });

    it('401 invalid_token for an unknown kid or a missing kid', async () => {
      assertInvalidToken(
        await http(
          `${server.baseUrl}${WHOAMI}`,
          bearer(forge(server, validClaims(server, client), { kid: 'nope' })),
        ),
      );
      const key = server.ctx.oauth.keys.signingKey();
      const noKid = signJws(
        b64url(JSON.stringify({ alg: key.alg, typ: 'at+jwt' })),
        validClaims(server, client),
        key.alg,
        key.privateKey,
      );
      assertInvalidToken(await http(`${server.baseUrl}${WHOAMI}`, bearer(noKid)));
    });

    it('401 invalid_token for a token signed by a key that is not ours', async () => {
      const { generateKeyPairSync } = await import('node:crypto');
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const kid = server.ctx.oauth.keys.signingKey().kid;
      const foreign = signJws(
        encodeHeader({ alg: 'ES256', typ: 'at+jwt', kid }),
        validClaims(server, client),
        'ES256',
        privateKey,
      );
      assertInvalidToken(await http(`${server.baseUrl}${WHOAMI}`, bearer(foreign)));
    });

    it('401 invalid_token for a token signed with our key that names a company that does not exist, never a 500', async () => {
      const unknown = forge(
        server,
        validClaims(server, client, { company_id: randomUUID(), scope: 'connector:write webhooks:write' }),
      );
      assertInvalidToken(await http(`${server.baseUrl}${WHOAMI}`, bearer(unknown)));
      // A write that would attach a row to that company (a foreign key to nothing) is refused the same way.
      const write = await http(`${server.baseUrl}/platform/v1/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${unknown}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'https://hooks.example/x', events: ['conversation.created'] }),
      });
      assertInvalidToken(write);
      // The same token for the client's real company is fine.
      const real = forge(server, validClaims(server, client, { scope: 'connector:write webhooks:write' }));
      assert.equal((await http(`${server.baseUrl}${WHOAMI}`, bearer(real))).status, 200);
    });

    it('401 invalid_token for a wrong issuer or audience', async () => {
      for (const overrides of [
        { iss: 'https://evil.example' },
        { iss: `${server.config.publicUrl}/` },
        { aud: 'https://other-api.example' },
        { aud: ['https://other-api.example'] },
      ]) {
        const forged = forge(server, validClaims(server, client, overrides));
        assertInvalidToken(await http(`${server.baseUrl}${WHOAMI}`, bearer(forged)));
      }
      const audArray = forge(
        server,
        validClaims(server, client, { aud: ['https://x.example', server.config.oauth.audience] }),
      );
      assert.equal((await http(`${server.baseUrl}${WHOAMI}`, bearer(audArray))).status, 200);
    });

    it('401 invalid_token "expired" after exp plus the clock tolerance, accepted within it', async () => {
      const now = Math.floor(Date.now() / 1000);
      const tolerance = server.config.oauth.clockToleranceSeconds;
      const expired = forge(
        server,
        validClaims(server, client, { iat: now - 4000, exp: now - tolerance - 5 }),
      );
      assertInvalidToken(
        await http(`${server.baseUrl}${WHOAMI}`, bearer(expired)),
        'The access token expired.',
      );
      const withinLeeway = forge(server, validClaims(server, client, { iat: now - 3610, exp: now - 10 }));
      assert.equal((await http(`${server.baseUrl}${WHOAMI}`, bearer(withinLeeway))).status, 200);
    });

    it('401 invalid_token for a token issued in the future or missing claims', async () => {
      const now = Math.floor(Date.now() / 1000);
      const future = forge(server, validClaims(server, client, { iat: now + 600, exp: now + 4200 }));
      assertInvalidToken(await http(`${server.baseUrl}${WHOAMI}`, bearer(future)));
      for (const missing of ['company_id', 'client_id', 'jti', 'exp', 'iat']) {
        const claims: Record<string, unknown> = validClaims(server, client);
        delete claims[missing];
        assertInvalidToken(await http(`${server.baseUrl}${WHOAMI}`, bearer(forge(server, claims))));
      }
    });

    it('tokens of a deleted client keep working until they expire; no new ones are issued', async () => {
      const doomed = await createTestClient(server.ctx, ['connector:write']);
      const issued = await tokenFor(server, doomed);
      await server.ctx.oauth.clients.delete(doomed.companyId, doomed.clientId);
      const result = await http(`${server.baseUrl}${SCOPED}`, bearer(issued));
      assert.equal(result.status, 200);
      const refused = await postToken(server, 'grant_type=client_credentials', {
        authorization: basicAuth(doomed.clientId, doomed.secret),
      });
      assert.equal(refused.status, 401);
    });

    it('routes without requiredScope need no token', async () => {
      assert.equal((await http(`${server.baseUrl}/healthz`)).status, 200);
      assert.equal((await http(`${server.baseUrl}/.well-known/jwks.json`)).status, 200);
    });
  });
}

describe('bearer auth verification cache', () => {
  let server: ScopedServer;
  let client: TestClient;
  before(async () => {
    server = await startScopedServer('sqlite', { clockToleranceSeconds: 0 });
    client = await createTestClient(server.ctx, ['connector:write']);
  });
  after(() => server.close());

  it('a cached token still stops working at its exp', async () => {
    // The server's key store, and a verifier on a clock the test moves (the server's own runs on Date.now).
    let clock = Date.now();
    const verifier = new AccessTokenVerifier(
      server.ctx.oauth.keys,
      server.config,
      (id) => server.ctx.companies.exists(id),
      () => clock,
    );
    const exp = Math.floor(clock / 1000) + 2;
    const shortLived = forge(server, validClaims(server, client, { exp }));
    await verifier.verify(shortLived);
    await verifier.verify(shortLived);
    assert.deepEqual(verifier.stats, { verified: 1, cacheHits: 1 }, 'the second answer came from the cache');
    clock = exp * 1000 - 1;
    await verifier.verify(shortLived);
    clock = exp * 1000;
    await assert.rejects(
      verifier.verify(shortLived),
      (err: InvalidAccessTokenError) => err.reason === 'expired',
    );
    assert.deepEqual(
      verifier.stats,
      { verified: 1, cacheHits: 2 },
      'refused from the cache, not re-verified',
    );
    // Once refused it is gone from the cache, and a fresh check refuses it too.
    await assert.rejects(
      verifier.verify(shortLived),
      (err: InvalidAccessTokenError) => err.reason === 'expired',
    );
    assert.equal(verifier.stats.verified, 2);
  });

  it('a verified token is answered from the cache, without a second signature check', async () => {
    const { verifier } = server.ctx.oauth;
    const token = await tokenFor(server, client);
    const before = { ...verifier.stats };
    assert.equal((await http(`${server.baseUrl}${WHOAMI}`, bearer(token))).status, 200);
    assert.equal((await http(`${server.baseUrl}${WHOAMI}`, bearer(token))).status, 200);
    assert.equal((await http(`${server.baseUrl}${WHOAMI}`, bearer(token))).status, 200);
    assert.equal(verifier.stats.verified - before.verified, 1);
    assert.equal(verifier.stats.cacheHits - before.cacheHits, 2);
  });
});
