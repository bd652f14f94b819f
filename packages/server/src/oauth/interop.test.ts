import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { createConversation, newVisitor, sdkPost } from '@parley/testing/webchat/webchat-fixtures';
import { createRemoteJWKSet, exportJWK, type JWTVerifyGetKey, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';

/**
 * Interoperability with independent implementations, not the project's own code: `oauth4webapi` as the client of
 * every machine-access flow (discovery, client credentials with client_secret_basic, client_secret_post and
 * private_key_jwt, DPoP with and without server nonces, revocation, introspection), and `jose` verifying the
 * tokens Parley issues — access tokens against the published JWKS, connection and subscription tokens with the
 * realtime HS256 secret.
 */
const WHOAMI = '/platform/v1/auth/whoami';
const insecure = { [oauth.allowInsecureRequests]: true } as const;
const REALTIME_SECRET = 'interop-realtime-token-secret-0123456789';

for (const database of TEST_DATABASES) {
  describe(`interop: oauth4webapi client and jose verification (${database})`, () => {
    let server: TestServer;
    let as: oauth.AuthorizationServer;
    let companyId: string;
    let publishedKeys: JWTVerifyGetKey;

    /** Verifies an access token with jose against the published JWKS, as RFC 9068 §4 asks. */
    const verifyAccessToken = async (token: string) => {
      const { payload, protectedHeader } = await jwtVerify(token, publishedKeys, {
        typ: 'at+jwt',
        issuer: server.config.publicUrl,
        audience: server.config.oauth.audience,
        requiredClaims: ['sub', 'client_id', 'iat', 'exp', 'jti', 'scope'],
      });
      assert.equal(payload.exp! - payload.iat!, 3600);
      assert.ok(protectedHeader.kid);
      return payload;
    };
    const secretClient = async (dpop?: 'required') => {
      const { client, secret } = await server.ctx.oauth.clients.createAny({
        companyId,
        name: 'Interop',
        scopes: ['connector:read', 'conversations:read'],
        dpop,
      });
      return { client: { client_id: client.clientId } as oauth.Client, secret: secret! };
    };
    const grant = async (
      client: oauth.Client,
      auth: oauth.ClientAuth,
      options: { DPoP?: oauth.DPoPHandle } = {},
    ) => {
      const response = await oauth.clientCredentialsGrantRequest(
        as,
        client,
        auth,
        new URLSearchParams({ scope: 'connector:read' }),
        { ...insecure, ...options },
      );
      return oauth.processClientCredentialsResponse(as, client, response);
    };
    const whoami = (token: string, options: { DPoP?: oauth.DPoPHandle } = {}) =>
      oauth.protectedResourceRequest(
        token,
        'GET',
        new URL(`${server.config.publicUrl}${WHOAMI}`),
        undefined,
        undefined,
        {
          ...insecure,
          ...options,
        },
      );

    before(async () => {
      server = await startTestServer({ database, config: { webchat: { tokenSecret: REALTIME_SECRET } } });
      companyId = (await server.ctx.companies.create('Interop Co')).id;
      const issuer = new URL(server.config.publicUrl);
      as = await oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oauth2' }),
      );
      publishedKeys = createRemoteJWKSet(new URL(as.jwks_uri!));
    });
    after(async () => server?.close());

    it('discovers the metadata: every auth method and algorithm, DPoP algorithms included', () => {
      assert.deepEqual(as.token_endpoint_auth_methods_supported, [
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
      ]);
      assert.deepEqual(as.dpop_signing_alg_values_supported, ['ES256', 'RS256', 'PS256', 'EdDSA']);
      assert.ok(as.revocation_endpoint && as.introspection_endpoint);
    });

    it('client credentials with client_secret_basic and client_secret_post; jose verifies the access tokens', async () => {
      const { client, secret } = await secretClient();
      for (const auth of [oauth.ClientSecretBasic(secret), oauth.ClientSecretPost(secret)]) {
        const tokens = await grant(client, auth);
        assert.equal(tokens.token_type, 'bearer');
        const claims = await verifyAccessToken(tokens.access_token);
        assert.equal(claims.client_id, client.client_id);
        assert.equal(claims.scope, 'connector:read');
        assert.equal((await whoami(tokens.access_token)).status, 200);
      }
    });

    it('client credentials with private_key_jwt (RFC 7523)', async () => {
      const pair = await oauth.generateKeyPair('ES256', { extractable: true });
      const { client } = await server.ctx.oauth.clients.createAny({
        companyId,
        name: 'Interop signer',
        scopes: ['connector:read'],
        authMethod: 'private_key_jwt',
        jwks: { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'interop-1', alg: 'ES256' }] },
      });
      const oauthClient = { client_id: client.clientId } as oauth.Client;
      const tokens = await grant(
        oauthClient,
        oauth.PrivateKeyJwt({ key: pair.privateKey, kid: 'interop-1' }),
      );
      assert.equal((await verifyAccessToken(tokens.access_token)).client_id, client.clientId);
    });

    it('DPoP: a bound token (cnf.jkt) that works only with proofs', async () => {
      const { client, secret } = await secretClient('required');
      const pair = await oauth.generateKeyPair('ES256');
      const dpop = oauth.DPoP(client, pair);
      const tokens = await grant(client, oauth.ClientSecretBasic(secret), { DPoP: dpop });
      assert.equal(tokens.token_type, 'dpop');
      const claims = await verifyAccessToken(tokens.access_token);
      assert.deepEqual(claims.cnf, { jkt: await dpop.calculateThumbprint() });
      const ok = await whoami(tokens.access_token, { DPoP: dpop });
      assert.equal(ok.status, 200);
      await assert.rejects(
        whoami(tokens.access_token),
        oauth.WWWAuthenticateChallengeError,
        'bound token as Bearer',
      );
    });

    it('revocation and introspection (RFC 7009, RFC 7662)', async () => {
      const { client, secret } = await secretClient();
      const auth = oauth.ClientSecretBasic(secret);
      const tokens = await grant(client, auth);
      const introspect = async () =>
        oauth.processIntrospectionResponse(
          as,
          client,
          await oauth.introspectionRequest(as, client, auth, tokens.access_token, insecure),
        );
      const active = await introspect();
      assert.equal(active.active, true);
      assert.equal(active.client_id, client.client_id);
      await oauth.processRevocationResponse(
        await oauth.revocationRequest(as, client, auth, tokens.access_token, insecure),
      );
      assert.equal((await introspect()).active, false);
      await assert.rejects(whoami(tokens.access_token), oauth.WWWAuthenticateChallengeError);
    });

    it('jose verifies the realtime connection and subscription tokens (HS256, RFC 7519)', async () => {
      const secret = new TextEncoder().encode(REALTIME_SECRET);
      const visitor = newVisitor(companyId);
      const connect = await sdkPost(server, visitor, '/auth/connect-token');
      const connection = await jwtVerify(connect.body.connection_token, secret, { algorithms: ['HS256'] });
      assert.equal(connection.payload.sub, visitor.sessionId);
      assert.equal(connection.payload.exp! - connection.payload.iat!, 900);
      const conversation = await createConversation(server, visitor);
      const subscribe = await sdkPost(server, visitor, '/auth/subscribe-token', {
        conversation_id: conversation.id,
      });
      const subscription = await jwtVerify(subscribe.body.subscription_token, secret, {
        algorithms: ['HS256'],
      });
      assert.equal(subscription.payload.sub, visitor.sessionId);
      assert.equal(subscription.payload.channel, conversation.channel);
      assert.equal(subscription.payload.exp! - subscription.payload.iat!, 86_400);
    });
  });

  describe(`interop: oauth4webapi follows DPoP server nonces (RFC 9449 §8, §9) (${database})`, () => {
    let server: TestServer;

    before(async () => {
      server = await startTestServer({ database, config: { oauth: { dpopNonce: true } } });
    });
    after(async () => server?.close());

    it('retries with the nonce the server hands out, at the token endpoint and on a protected route', async () => {
      const companyId = (await server.ctx.companies.create('Nonce Co')).id;
      const created = await server.ctx.oauth.clients.createAny({
        companyId,
        name: 'N',
        scopes: ['connector:read'],
      });
      const client = { client_id: created.client.clientId } as oauth.Client;
      const issuer = new URL(server.config.publicUrl);
      const as = await oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oauth2' }),
      );
      const dpop = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
      const request = () =>
        oauth.clientCredentialsGrantRequest(
          as,
          client,
          oauth.ClientSecretBasic(created.secret!),
          {},
          { ...insecure, DPoP: dpop },
        );
      let nonceErrors = 0;
      let tokens: oauth.TokenEndpointResponse | undefined;
      for (let attempt = 0; attempt < 2 && !tokens; attempt++) {
        try {
          tokens = await oauth.processClientCredentialsResponse(as, client, await request());
        } catch (err) {
          if (!oauth.isDPoPNonceError(err)) throw err;
          nonceErrors++;
        }
      }
      assert.equal(nonceErrors, 1, 'the first request meets use_dpop_nonce');
      assert.equal(tokens?.token_type, 'dpop');
      // The nonce the token endpoint handed out is the cluster's: the protected route takes it without asking again.
      const response = await oauth.protectedResourceRequest(
        tokens!.access_token,
        'GET',
        new URL(`${server.config.publicUrl}${WHOAMI}`),
        undefined,
        undefined,
        { ...insecure, DPoP: dpop },
      );
      assert.equal(response.status, 200);
    });
  });
}
