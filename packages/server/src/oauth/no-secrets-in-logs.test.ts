import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { http } from '@parley/testing/http-client';
import { basicAuth, bearer, createTestClient, postToken } from '@parley/testing/oauth/oauth-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { generateClientSecret } from './credentials.ts';

describe('no secret or token reaches the server log', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ database: 'sqlite', config: { logLevel: 'trace' } });
  });
  after(() => server.close());

  it('after the whole flow, including failures and misuse, the log holds no secret, token or Basic value', async () => {
    const client = await createTestClient(server.ctx, ['connector:read']);
    const auth = basicAuth(client.clientId, client.secret);
    const ok = await postToken(server, 'grant_type=client_credentials', { authorization: auth });
    assert.equal(ok.status, 200);
    const token: string = ok.body.access_token;
    assert.equal((await http(`${server.baseUrl}/platform/v1/auth/whoami`, bearer(token))).status, 200);

    // Misuse that puts credentials where they do not belong.
    const wrongSecret = generateClientSecret();
    await postToken(server, 'grant_type=client_credentials', {
      authorization: basicAuth(client.clientId, wrongSecret),
    });
    await postToken(
      server,
      `grant_type=client_credentials&client_id=${client.clientId}&client_secret=${client.secret}`,
    );
    await postToken(
      server,
      `grant_type=client_credentials&client_secret=${client.secret}&client_secret=${client.secret}`,
    );
    await postToken(server, `grant_type=password&password=${client.secret}`, { authorization: auth });
    await http(`${server.baseUrl}/platform/v1/auth/token/client-credentials?client_secret=${client.secret}`);
    await http(`${server.baseUrl}/platform/v1/auth/whoami?access_token=${token}`);
    await http(`${server.baseUrl}/platform/v1/auth/whoami`, bearer(`${token}x`));
    await http(`${server.baseUrl}/platform/v1/auth/whoami`, {
      headers: { authorization: `Bearer ${token} ${token}` },
    });
    await http(`${server.baseUrl}/no-such-route?access_token=${token}`);

    const log = server.logs.join('\n');
    // The log is not empty: requests were logged (by path), so the scan below means something.
    assert.ok(log.includes('/platform/v1/auth/whoami'));
    assert.ok(log.includes('/platform/v1/auth/token/client-credentials'));
    const base64Credentials = auth.slice('Basic '.length);
    for (const [what, secret] of [
      ['client secret', client.secret],
      ['wrong secret', wrongSecret],
      ['access token', token],
      ['token signature', token.split('.')[2]!],
      ['Basic credentials', base64Credentials],
    ] as const) {
      assert.ok(!log.includes(secret), `the log contains the ${what}`);
    }
  });
});
