import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cliEnvFor } from '@parley/testing/cli';
import { TEST_DATABASES } from '@parley/testing/databases';
import { basicAuth, postToken } from '@parley/testing/oauth/oauth-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { runCli } from '../cli/main.ts';
import { parseDuration } from './api-clients.service.ts';

const GRANT = 'grant_type=client_credentials';

for (const database of TEST_DATABASES) {
  describe(`secret rotation with overlap (${database})`, () => {
    let server: TestServer;
    let env: Record<string, string>;
    let companyId: string;
    // biome-ignore lint/suspicious/noExplicitAny: parsed CLI JSON.
    const cli = async (...args: string[]): Promise<{ code: number; output: string; json: any }> => {
      const lines: string[] = [];
      const code = await runCli(args, (line) => lines.push(line), { env });
      const output = lines.join('\n');
      let json: unknown;
      try {
        json = JSON.parse(output);
      } catch {}
      return { code, output, json };
    };
    const grant = (id: string, secret: string) =>
      postToken(server, GRANT, { authorization: basicAuth(id, secret) });

    before(async () => {
      server = await startTestServer({ database });
      env = await cliEnvFor(server);
      companyId = (await server.ctx.companies.create('Rotating Co')).id;
    });
    after(() => server.close());

    it('rotate-secret → both secrets work; revoke-secret → the old one gets invalid_client at once', async () => {
      const created = await cli(
        'api-clients',
        'create',
        '--company',
        companyId,
        '--name',
        'Rotator',
        '--scopes',
        'connector:read',
        '--json',
      );
      const { client_id, client_secret: oldSecret } = created.json;
      assert.equal((await grant(client_id, oldSecret)).status, 200);

      const before = Date.now();
      const rotated = await cli(
        'api-clients',
        'rotate-secret',
        '--company',
        companyId,
        '--client-id',
        client_id,
        '--json',
      );
      assert.equal(rotated.code, 0, rotated.output);
      assert.deepEqual(Object.keys(rotated.json).sort(), [
        'client_id',
        'client_secret',
        'old_secret_expires_at',
        'secret_id',
      ]);
      assert.equal(rotated.json.client_id, client_id);
      assert.match(rotated.json.client_secret, /^pcs_[0-9A-Za-z]{49}$/);
      assert.match(rotated.json.secret_id, /^psk_[0-9A-Za-z]{22}$/);
      // Default overlap: 7 days.
      const overlapMs = Date.parse(rotated.json.old_secret_expires_at) - before;
      assert.ok(overlapMs > 7 * 86400_000 - 60_000 && overlapMs <= 7 * 86400_000 + 60_000, `${overlapMs}`);
      const newSecret = rotated.json.client_secret;
      assert.notEqual(newSecret, oldSecret);

      assert.equal(
        (await grant(client_id, oldSecret)).status,
        200,
        'the old secret works during the overlap',
      );
      assert.equal((await grant(client_id, newSecret)).status, 200, 'the new secret works at once');

      // The server writes secret uses about once a second; flush them now instead of waiting.
      await server.ctx.oauth.clients.flushUsage();
      const listed = await cli(
        'api-clients',
        'secrets',
        '--company',
        companyId,
        '--client-id',
        client_id,
        '--json',
      );
      assert.equal(listed.code, 0, listed.output);
      assert.equal(listed.json.secrets.length, 2);
      for (const s of listed.json.secrets)
        assert.deepEqual(Object.keys(s).sort(), ['created_at', 'expires_at', 'id', 'last_used_at']);
      const [old, fresh] = listed.json.secrets;
      assert.equal(fresh.id, rotated.json.secret_id);
      assert.equal(old.expires_at, rotated.json.old_secret_expires_at);
      assert.equal(fresh.expires_at, null);
      assert.ok(old.last_used_at && fresh.last_used_at, 'each secret shows when it was last used');
      assert.ok(!listed.output.includes(oldSecret) && !listed.output.includes(newSecret));

      const revoked = await cli(
        'api-clients',
        'revoke-secret',
        '--company',
        companyId,
        '--client-id',
        client_id,
        '--secret-id',
        old.id,
        '--json',
      );
      assert.equal(revoked.code, 0, revoked.output);
      const refused = await grant(client_id, oldSecret);
      assert.equal(refused.status, 401);
      assert.equal(refused.body.error, 'invalid_client');
      assert.equal((await grant(client_id, newSecret)).status, 200);

      const after = await cli(
        'api-clients',
        'secrets',
        '--company',
        companyId,
        '--client-id',
        client_id,
        '--json',
      );
      assert.deepEqual(
        after.json.secrets.map((s: { id: string }) => s.id),
        [rotated.json.secret_id],
      );
      // The last working secret cannot be revoked (the client would be locked out).
      const last = await cli(
        'api-clients',
        'revoke-secret',
        '--company',
        companyId,
        '--client-id',
        client_id,
        '--secret-id',
        fresh.id,
        '--json',
      );
      assert.notEqual(last.code, 0);
      assert.equal(last.json.error.code, 'last_client_secret');
      // Revoking again: not found.
      const again = await cli(
        'api-clients',
        'revoke-secret',
        '--company',
        companyId,
        '--client-id',
        client_id,
        '--secret-id',
        old.id,
        '--json',
      );
      assert.equal(again.json.error.code, 'api_client_secret_not_found');

      const events = (await server.ctx.audit.list({ subject: client_id })).map((e) => e.type);
      assert.ok(events.includes('api_client.secret_rotated') && events.includes('api_client.secret_revoked'));
      assert.ok(!JSON.stringify(await server.ctx.audit.list({ subject: client_id })).includes(newSecret));
      assert.ok(!server.logs.join('\n').includes(newSecret));
    });

    it('--old-expires-in 0 stops the old secret at once; other companies see "not found"', async () => {
      const { client, secret } = await server.ctx.oauth.clients.create({
        companyId,
        name: 'Immediate',
        scopes: ['connector:read'],
      });
      const rotated = await cli(
        'api-clients',
        'rotate-secret',
        '--company',
        companyId,
        '--client-id',
        client.clientId,
        '--old-expires-in',
        '0',
        '--json',
      );
      assert.equal(rotated.code, 0, rotated.output);
      assert.equal((await grant(client.clientId, secret)).status, 401);
      assert.equal((await grant(client.clientId, rotated.json.client_secret)).status, 200);

      const other = (await server.ctx.companies.create('Other Co')).id;
      const foreign = await cli(
        'api-clients',
        'rotate-secret',
        '--company',
        other,
        '--client-id',
        client.clientId,
        '--json',
      );
      assert.equal(foreign.json.error.code, 'api_client_not_found');
      const bad = await cli(
        'api-clients',
        'rotate-secret',
        '--company',
        companyId,
        '--client-id',
        client.clientId,
        '--old-expires-in',
        '7 weeks',
        '--json',
      );
      assert.equal(bad.json.error.code, 'invalid_expiry');
    });

    it('an expired old secret gets invalid_client; a rotation never shortens an earlier expiry', async () => {
      const { client, secret } = await server.ctx.oauth.clients.create({
        companyId,
        name: 'Expiring',
        scopes: ['connector:read'],
      });
      await server.ctx.oauth.clients.rotateSecret({
        companyId,
        clientId: client.clientId,
        oldExpiresInSeconds: 3600,
      });
      // Move the first secret's expiry into the past, as time passing would.
      await server.ctx.store.db
        .updateTable('api_client_secrets')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('client_id', '=', client.clientId)
        .where('expires_at', 'is not', null)
        .execute();
      assert.equal((await grant(client.clientId, secret)).status, 401);
      const secrets = await server.ctx.oauth.clients.listSecrets(companyId, client.clientId);
      assert.equal(secrets.length, 1, 'an expired secret is no longer listed');
    });
  });
}

describe('parseDuration', () => {
  it('reads d/h/m/s and 0, refuses the rest', () => {
    assert.equal(parseDuration('7d'), 604800);
    assert.equal(parseDuration('12h'), 43200);
    assert.equal(parseDuration('30m'), 1800);
    assert.equal(parseDuration('45s'), 45);
    assert.equal(parseDuration('0'), 0);
    for (const bad of ['', '7', '-1d', '1w', 'd', '1.5h'])
      assert.throws(() => parseDuration(bad), { code: 'invalid_expiry' });
  });
});
