import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cliEnvFor } from '@parley/testing/cli';
import { TestClock } from '@parley/testing/clock';
import { TEST_DATABASES } from '@parley/testing/databases';
import {
  assertionGrant,
  type ClientSigningKey,
  type JwksServer,
  makeClientKey,
  startJwksServer,
} from '@parley/testing/oauth/jwks-server';
import { postToken } from '@parley/testing/oauth/oauth-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { runCli } from '../cli/main.ts';
import { REFETCH_INTERVAL_MS } from './client-key-sets.ts';
import { TOKEN_PATH } from './token.routes.ts';

for (const database of TEST_DATABASES) {
  describe(`private_key_jwt with a jwks_uri (${database})`, () => {
    let server: TestServer;
    let jwks: JwksServer;
    let companyId: string;
    let clientId: string;
    let keyA: ClientSigningKey;
    let keyB: ClientSigningKey;
    const clock = new TestClock();
    const audience = () => `${server.config.publicUrl}${TOKEN_PATH}`;
    const grantWith = async (key: ClientSigningKey, id = clientId) =>
      postToken(server, assertionGrant(await key.assertion({ clientId: id, audience: audience() })));

    before(async () => {
      jwks = await startJwksServer();
      keyA = await makeClientKey('key-a');
      keyB = await makeClientKey('key-b');
      jwks.publish([keyA.publicJwk]);
      server = await startTestServer({ database, clock: clock.now });
      companyId = (await server.ctx.companies.create('Uri Co')).id;
      const lines: string[] = [];
      const args = ['api-clients', 'create', '--company', companyId, '--name', 'Fetched', '--scopes'];
      const code = await runCli(
        [...args, 'connector:read', '--auth-method', 'private_key_jwt', '--jwks-uri', jwks.url, '--json'],
        (line) => lines.push(line),
        { env: await cliEnvFor(server) },
      );
      assert.equal(code, 0, lines.join('\n'));
      clientId = JSON.parse(lines.join('\n')).client_id;
    });
    after(async () => {
      await server?.close();
      await jwks?.close();
    });

    it('fetches the key set from the jwks_uri once and serves later assertions from the cache', async () => {
      const before = jwks.requests;
      const first = await grantWith(keyA);
      assert.equal(first.status, 200, first.text);
      assert.equal((await grantWith(keyA)).status, 200);
      assert.equal(jwks.requests - before, 1);
      const listed = await server.ctx.oauth.clients.list(companyId);
      assert.equal(listed.find((c) => c.clientId === clientId)?.jwksUri, jwks.url);
    });

    it('follows a key rotation: an unknown kid fetches the set again, once per interval', async () => {
      assert.equal((await grantWith(keyA)).status, 200);
      jwks.publish([keyB.publicJwk]);
      const before = jwks.requests;
      const tooSoon = await grantWith(keyB);
      assert.equal(tooSoon.status, 401, 'a kid unknown right after a fetch fetches nothing');
      assert.equal(jwks.requests, before);
      clock.advance(REFETCH_INTERVAL_MS);
      const rotated = await grantWith(keyB);
      assert.equal(rotated.status, 200, rotated.text);
      assert.equal(jwks.requests - before, 1);
      const stranger = await makeClientKey('key-c');
      const refused = await grantWith(stranger);
      assert.equal(refused.status, 401);
      assert.equal(refused.body.error, 'invalid_client');
      assert.equal(jwks.requests - before, 1, 'an unknown kid within the interval fetches nothing');
      assert.equal((await grantWith(keyA)).status, 401, 'the retired key no longer works');
    });
  });

  describe(`jwks_uri refused by the outbound address policy (${database})`, () => {
    let server: TestServer;

    before(async () => {
      server = await startTestServer({ database, config: { integrations: { outboundBlockPrivate: true } } });
    });
    after(async () => server?.close());

    it('never fetches a key set from a private address; the assertion fails as invalid_client', async () => {
      const companyId = (await server.ctx.companies.create('Blocked Co')).id;
      const key = await makeClientKey('k');
      for (const uri of ['https://10.0.0.1/jwks.json', 'https://169.254.169.254/latest/jwks']) {
        const { client } = await server.ctx.oauth.clients.createAny({
          companyId,
          name: 'Internal',
          scopes: ['connector:read'],
          authMethod: 'private_key_jwt',
          jwksUri: uri,
        });
        const audience = `${server.config.publicUrl}${TOKEN_PATH}`;
        const assertion = await key.assertion({ clientId: client.clientId, audience });
        const result = await postToken(server, assertionGrant(assertion));
        assert.equal(result.status, 401, uri);
        assert.equal(result.body.error, 'invalid_client');
        const [event] = await server.ctx.audit.list({ type: 'client_auth.failed', subject: client.clientId });
        assert.ok(event, 'the failure is audited');
        assert.equal((event.details as { reason?: string }).reason, 'jwks_unavailable');
      }
    });
  });
}
