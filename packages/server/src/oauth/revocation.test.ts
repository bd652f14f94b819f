import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { http } from '@parley/testing/http-client';
import {
  basicAuth,
  createTestClient,
  FORM,
  fetchToken,
  type TestClient,
} from '@parley/testing/oauth/oauth-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import { INTROSPECT_PATH, REVOKE_PATH } from './token.routes.ts';

const post = (server: TestServer, path: string, client: TestClient, body: string) =>
  http(`${server.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': FORM, authorization: basicAuth(client.clientId, client.secret) },
    body,
  });
const whoami = (server: TestServer, token: string) =>
  http(`${server.baseUrl}/platform/v1/auth/whoami`, { headers: { authorization: `Bearer ${token}` } });

for (const database of TEST_DATABASES) {
  describe(`token revocation (RFC 7009) and introspection (RFC 7662) (${database})`, () => {
    let nodeA: TestServer;
    let nodeB: TestServer;
    let acme: TestClient;
    let acmeOther: TestClient;
    let globex: TestClient;
    before(async () => {
      // Every node of a cluster has the same public URL (token `iss` and `aud`).
      const config = { publicUrl: 'http://parley.test', oauth: { audience: 'http://parley.test' } };
      nodeA = await startTestServer({ database, config });
      nodeB = await startTestServer({ database, config, shareWith: nodeA });
      acme = await createTestClient(nodeA.ctx);
      acmeOther = await createTestClient(nodeA.ctx, ['connector:read'], acme.companyId);
      globex = await createTestClient(nodeA.ctx);
    });
    after(async () => {
      await nodeB.close();
      await nodeA.close();
    });

    it('introspects an active token of the own company; another company gets {"active":false}', async () => {
      const token = await fetchToken(nodeA, acme);
      const own = await post(nodeA, INTROSPECT_PATH, acme, `token=${token}`);
      assert.equal(own.status, 200);
      assert.equal(own.headers.get('cache-control'), 'no-store');
      assert.equal(own.body.active, true);
      assert.equal(own.body.client_id, acme.clientId);
      assert.equal(own.body.sub, acme.clientId);
      assert.equal(own.body.company_id, acme.companyId);
      assert.equal(own.body.token_type, 'Bearer');
      assert.equal(typeof own.body.exp, 'number');
      assert.equal(own.body.scope, 'connector:write connector:read');
      // Another client of the same company may introspect it too.
      assert.equal((await post(nodeB, INTROSPECT_PATH, acmeOther, `token=${token}`)).body.active, true);
      const foreign = await post(nodeA, INTROSPECT_PATH, globex, `token=${token}`);
      assert.deepEqual(foreign.body, { active: false });
      assert.deepEqual((await post(nodeA, INTROSPECT_PATH, acme, 'token=not-a-token')).body, {
        active: false,
      });
    });

    it('needs client authentication and a token parameter', async () => {
      const token = await fetchToken(nodeA, acme);
      const anonymous = await http(`${nodeA.baseUrl}${INTROSPECT_PATH}`, {
        method: 'POST',
        headers: { 'content-type': FORM },
        body: `token=${token}`,
      });
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.body.error, 'invalid_client');
      const wrong = await post(nodeA, REVOKE_PATH, { ...acme, secret: globex.secret }, `token=${token}`);
      assert.equal(wrong.status, 401);
      const missing = await post(nodeA, REVOKE_PATH, acme, 'token_type_hint=access_token');
      assert.equal(missing.status, 400);
      assert.equal(missing.body.error, 'invalid_request');
      assert.equal((await whoami(nodeA, token)).status, 200, 'nothing was revoked');
    });

    it('another company revoking a token: 200 and no effect', async () => {
      const token = await fetchToken(nodeA, acme);
      const foreign = await post(nodeA, REVOKE_PATH, globex, `token=${token}&token_type_hint=access_token`);
      assert.equal(foreign.status, 200);
      assert.equal((await whoami(nodeA, token)).status, 200);
      assert.equal((await post(nodeA, INTROSPECT_PATH, acme, `token=${token}`)).body.active, true);
    });

    it('a revoked token gets 401 invalid_token on the revoking node at once and on the other node soon after', async () => {
      const token = await fetchToken(nodeA, acme);
      // Both nodes have verified (and cached) the token before it is revoked.
      assert.equal((await whoami(nodeA, token)).status, 200);
      assert.equal((await whoami(nodeB, token)).status, 200);
      const revoked = await post(nodeA, REVOKE_PATH, acme, `token=${token}`);
      assert.equal(revoked.status, 200);
      assert.equal(revoked.text, '');
      const refused = await whoami(nodeA, token);
      assert.equal(refused.status, 401);
      assert.match(refused.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      // The other node reads revocations every REVOCATION_POLL_MS (the 1 s goal is a bench figure, not asserted).
      await waitFor(
        'node B to refuse the revoked token',
        async () => (await whoami(nodeB, token)).status === 401,
      );
      assert.deepEqual((await post(nodeB, INTROSPECT_PATH, acme, `token=${token}`)).body, { active: false });
      // Revoking again is fine (§2.2), and a fresh token still works.
      assert.equal((await post(nodeB, REVOKE_PATH, acme, `token=${token}`)).status, 200);
      assert.equal((await whoami(nodeB, await fetchToken(nodeB, acme))).status, 200);
      const events = await nodeA.ctx.audit.list({ subject: acme.clientId });
      assert.ok(events.some((e) => e.type === 'token.revoked'));
    });

    it('a node that starts after the revocation refuses the token too', async () => {
      const token = await fetchToken(nodeA, acme);
      await post(nodeA, REVOKE_PATH, acme, `token=${token}`);
      const nodeC = await startTestServer({ database, config: nodeA.config, shareWith: nodeA });
      try {
        assert.equal((await whoami(nodeC, token)).status, 401);
      } finally {
        await nodeC.close();
      }
    });
  });
}
