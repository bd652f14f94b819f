import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
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
import { REVOKE_PATH } from './token.routes.ts';

const whoami = (server: TestServer, token: string) =>
  http(`${server.baseUrl}/platform/v1/auth/whoami`, { headers: { authorization: `Bearer ${token}` } });
const revoke = (server: TestServer, client: TestClient, token: string) =>
  http(`${server.baseUrl}${REVOKE_PATH}`, {
    method: 'POST',
    headers: { 'content-type': FORM, authorization: basicAuth(client.clientId, client.secret) },
    body: `token=${token}`,
  });

// Two nodes on PostgreSQL + Redis whose store poll is as slow as it may be (60 s): what reaches node B within the
// wait's bound can only have come over the broker (packages/server/src/oauth/revocation-list.ts).
describe('revocation pushed over the broker (postgres + redis, two nodes)', () => {
  let nodeA: TestServer;
  let nodeB: TestServer;
  let client: TestClient;
  before(async () => {
    const config = {
      publicUrl: 'http://parley.test',
      oauth: { audience: 'http://parley.test', revocationPollMs: 60_000 },
    };
    nodeA = await startTestServer({ database: 'postgres', redis: true, config });
    nodeB = await startTestServer({ database: 'postgres', redis: true, config, shareWith: nodeA });
    client = await createTestClient(nodeA.ctx);
  });
  after(async () => {
    await nodeB.close();
    await nodeA.close();
  });

  it('a token revoked on node A is refused on node B long before B polls the store', async () => {
    const token = await fetchToken(nodeA, client);
    // B has verified (and cached) the token before it is revoked.
    assert.equal((await whoami(nodeB, token)).status, 200);
    assert.equal((await revoke(nodeA, client, token)).status, 200);
    await waitFor(
      'node B to refuse the revoked token',
      async () => (await whoami(nodeB, token)).status === 401,
      5_000,
      10,
    );
    const refused = await whoami(nodeB, token);
    assert.match(refused.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    // Other tokens of the client are untouched.
    assert.equal((await whoami(nodeB, await fetchToken(nodeB, client))).status, 200);
  });

  it('a revocation on node B reaches node A the same way', async () => {
    const token = await fetchToken(nodeB, client);
    assert.equal((await whoami(nodeA, token)).status, 200);
    assert.equal((await revoke(nodeB, client, token)).status, 200);
    await waitFor(
      'node A to refuse the revoked token',
      async () => (await whoami(nodeA, token)).status === 401,
      5_000,
      10,
    );
  });
});
