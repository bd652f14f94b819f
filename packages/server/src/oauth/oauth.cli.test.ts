import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { cliEnvFor } from '@parley/testing/cli';
import { TEST_DATABASES } from '@parley/testing/databases';
import { basicAuth, claimsOf, headerOf, postToken } from '@parley/testing/oauth/oauth-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { runCli } from '../cli/main.ts';

const GRANT = 'grant_type=client_credentials';
const repoRoot = new URL('../../../../', import.meta.url).pathname;

interface CliRun {
  code: number;
  output: string;
  // biome-ignore lint/suspicious/noExplicitAny: parsed CLI JSON.
  json: any;
}

function cliRunner(env: () => Record<string, string>) {
  return async (...args: string[]): Promise<CliRun> => {
    const lines: string[] = [];
    const code = await runCli(args, (line) => lines.push(line), { env: env() });
    const output = lines.join('\n');
    let json: unknown;
    try {
      json = JSON.parse(output);
    } catch {
      json = undefined;
    }
    return { code, output, json };
  };
}

for (const database of TEST_DATABASES) {
  describe(`oauth CLI (${database})`, () => {
    let server: TestServer;
    let env: Record<string, string>;
    let companyId: string;
    const cli = cliRunner(() => env);
    const createClient = (name: string, scopes: string, options: { company?: string; json?: boolean } = {}) =>
      cli(
        'api-clients',
        'create',
        '--company',
        options.company ?? companyId,
        '--name',
        name,
        '--scopes',
        scopes,
        ...(options.json === false ? [] : ['--json']),
      );
    const deleteClient = (company: string, clientId: string) =>
      cli('api-clients', 'delete', '--company', company, '--client-id', clientId, '--json');
    const tokenFor = (created: CliRun) =>
      postToken(server, GRANT, {
        authorization: basicAuth(created.json.client_id, created.json.client_secret),
      });

    before(async () => {
      server = await startTestServer({ database });
      env = await cliEnvFor(server);
      companyId = (await server.ctx.companies.create('CLI Co')).id;
    });
    after(() => server.close());

    it('api-clients create prints {client_id, client_secret, name, scopes} once, and the server accepts it', async () => {
      const run = await createClient('Billing sync', 'connector:write connector:read');
      assert.equal(run.code, 0, run.output);
      assert.deepEqual(Object.keys(run.json).sort(), ['client_id', 'client_secret', 'name', 'scopes']);
      assert.match(run.json.client_id, /^pcl_[0-9A-Za-z]{22}$/);
      assert.match(run.json.client_secret, /^pcs_[0-9A-Za-z]{49}$/);
      assert.equal(run.json.name, 'Billing sync');
      assert.deepEqual(run.json.scopes, ['connector:write', 'connector:read']);

      const token = await tokenFor(run);
      assert.equal(token.status, 200, token.text);
      assert.equal(claimsOf(token.body.access_token).company_id, companyId);

      // Only a keyed digest is stored.
      const row = await server.ctx.store.db
        .selectFrom('api_clients')
        .selectAll()
        .where('id', '=', run.json.client_id)
        .executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(row).includes(run.json.client_secret));
      assert.match(row.secret_digest, /^[A-Za-z0-9_-]{43}$/);
      const [event] = await server.ctx.audit.list({
        type: 'api_client.created',
        subject: run.json.client_id,
      });
      assert.equal(event?.actor, 'cli');
      assert.ok(!JSON.stringify(event).includes(run.json.client_secret));
    });

    it('api-clients create --dpop required makes a client that must send DPoP proofs', async () => {
      const run = await cli(
        'api-clients',
        'create',
        '--company',
        companyId,
        '--name',
        'Bound',
        '--scopes',
        'connector:read',
        '--dpop',
        'required',
        '--json',
      );
      assert.equal(run.code, 0, run.output);
      const list = await cli('api-clients', 'list', '--company', companyId, '--json');
      const entry = list.json.api_clients.find(
        (c: { client_id: string }) => c.client_id === run.json.client_id,
      );
      assert.equal(entry.dpop, 'required');
      const token = await tokenFor(run);
      assert.equal(token.status, 400);
      assert.equal(token.body.error, 'invalid_dpop_proof');
      const bad = await cli(
        'api-clients',
        'create',
        '--company',
        companyId,
        '--name',
        'Bad',
        '--scopes',
        'connector:read',
        '--dpop',
        'always',
      );
      assert.equal(bad.code, 2);
    });

    it('api-clients set-quota sets a client’s quotas, "default" restores the default, and the token endpoint applies it', async () => {
      const created = await createClient('Quota', 'connector:read');
      const clientId = created.json.client_id;
      const setQuota = (...flags: string[]) =>
        cli('api-clients', 'set-quota', '--company', companyId, '--client-id', clientId, ...flags, '--json');
      const set = await setQuota('--tokens-per-minute', '1', '--api-calls-per-minute', '30');
      assert.equal(set.code, 0, set.output);
      assert.deepEqual(set.json, {
        client_id: clientId,
        quotas: { tokens_per_minute: 1, api_calls_per_minute: 30 },
      });
      assert.equal((await tokenFor(created)).status, 200);
      const refused = await tokenFor(created);
      assert.equal(refused.status, 429);
      assert.equal(refused.body.code, 'client_quota_exceeded');
      const back = await setQuota('--api-calls-per-minute', 'default');
      assert.deepEqual(back.json.quotas, { tokens_per_minute: 1, api_calls_per_minute: null });
      const bad = await setQuota('--tokens-per-minute', 'lots');
      assert.equal(bad.code, 2, bad.output);
      const zero = await setQuota('--tokens-per-minute', '0');
      assert.equal(zero.json.error.code, 'invalid_quota');
    });

    it('api-clients create tells people the secret is shown once', async () => {
      const run = await createClient('Human', 'connector:read', { json: false });
      assert.equal(run.code, 0);
      assert.match(run.output, /client_secret: pcs_/);
      assert.match(run.output, /shown only this once/);
    });

    it('api-clients list shows the company’s clients without any secret', async () => {
      const created = await createClient('Listed', 'connector:read');
      const list = await cli('api-clients', 'list', '--company', companyId, '--json');
      assert.equal(list.code, 0);
      const entry = list.json.api_clients.find(
        (c: { client_id: string }) => c.client_id === created.json.client_id,
      );
      assert.deepEqual(Object.keys(entry).sort(), [
        'auth_method',
        'client_id',
        'created_at',
        'dpop',
        'last_used_at',
        'name',
        'quotas',
        'scopes',
        'secret_hint',
      ]);
      assert.deepEqual(entry.quotas, { tokens_per_minute: null, api_calls_per_minute: null });
      assert.equal(entry.secret_hint, `pcs_…${created.json.client_secret.slice(-4)}`);
      assert.ok(!list.output.includes(created.json.client_secret));
      const human = await cli('api-clients', 'list', '--company', companyId);
      assert.ok(human.output.includes(created.json.client_id));
      assert.ok(!human.output.includes(created.json.client_secret));
    });

    it('api-clients delete stops new tokens; deleting again or in another company is "not found"', async () => {
      const created = await createClient('Doomed', 'connector:read');
      const auth = basicAuth(created.json.client_id, created.json.client_secret);
      assert.equal((await postToken(server, GRANT, { authorization: auth })).status, 200);

      const otherCompany = (await server.ctx.companies.create('Other Co')).id;
      const foreign = await deleteClient(otherCompany, created.json.client_id);
      assert.equal(foreign.code, 1);
      assert.equal(foreign.json.error.code, 'api_client_not_found');

      const deleted = await deleteClient(companyId, created.json.client_id);
      assert.equal(deleted.code, 0, deleted.output);
      assert.equal(deleted.json.client_id, created.json.client_id);
      assert.ok(Date.parse(deleted.json.deleted_at) > 0);
      assert.equal((await postToken(server, GRANT, { authorization: auth })).status, 401);

      const list = await cli('api-clients', 'list', '--company', companyId, '--json');
      assert.ok(
        !list.json.api_clients.some((c: { client_id: string }) => c.client_id === created.json.client_id),
      );
      const again = await deleteClient(companyId, created.json.client_id);
      assert.equal(again.code, 1);
      assert.equal(again.json.error.code, 'api_client_not_found');
      const [event] = await server.ctx.audit.list({
        type: 'api_client.deleted',
        subject: created.json.client_id,
      });
      assert.equal(event?.companyId, companyId);
    });

    it('api-clients create refuses bad input with stable codes', async () => {
      const cases: Array<[string[], number, string]> = [
        [['--scopes', 'connector:write admin'], 1, 'invalid_scopes'],
        [['--scopes', ' '], 2, 'usage'],
        [['--scopes', ','], 1, 'invalid_scopes'],
        [['--name', 'x'.repeat(201), '--scopes', 'connector:read'], 1, 'invalid_name'],
      ];
      for (const [extra, code, errorCode] of cases) {
        const args = ['api-clients', 'create', '--company', companyId];
        if (!extra.includes('--name')) args.push('--name', 'Bad');
        const run = await cli(...args, ...extra, '--json');
        assert.equal(run.code, code, `${extra.join(' ')} → ${run.output}`);
        assert.equal(run.json.error.code, errorCode);
      }
      const missing = await cli(
        'api-clients',
        'create',
        '--company',
        companyId,
        '--name',
        'No scopes',
        '--json',
      );
      assert.equal(missing.code, 2);
      const unknownCompany = await createClient('Ghost', 'connector:read', {
        company: '00000000-0000-4000-8000-000000000000',
      });
      assert.equal(unknownCompany.code, 1);
      assert.equal(unknownCompany.json.error.code, 'company_not_found');
    });

    it('keys list and keys rotate; the server signs with the rotated key after it reloads', async () => {
      const before = await cli('keys', 'list', '--json');
      assert.equal(before.code, 0);
      const active = before.json.keys.find((k: { status: string }) => k.status === 'active');
      assert.ok(active);
      assert.deepEqual(Object.keys(active).sort(), [
        'alg',
        'created_at',
        'kid',
        'published',
        'retired_at',
        'status',
      ]);

      const rotated = await cli('keys', 'rotate', '--json');
      assert.equal(rotated.code, 0, rotated.output);
      assert.equal(rotated.json.previous_kid, active.kid);
      const after = await cli('keys', 'list', '--json');
      assert.deepEqual(
        after.json.keys.slice(0, 2).map((k: { kid: string; status: string }) => [k.kid, k.status]),
        [
          [rotated.json.kid, 'active'],
          [active.kid, 'retired'],
        ],
      );
      await server.ctx.oauth.keys.reload();
      const created = await createClient('K', 'connector:read');
      const token = await tokenFor(created);
      assert.equal(headerOf(token.body.access_token).kid, rotated.json.kid);
    });

    it('audit list shows OAuth events, filtered by company, type and limit, and never a secret', async () => {
      const created = await createClient('Audited', 'connector:read');
      await tokenFor(created);
      // token.issued is batched; a graceful shutdown writes it too, as flush() does here.
      await server.ctx.oauth.auditBatcher.flush();
      const all = await cli('audit', 'list', '--company', companyId, '--json');
      assert.equal(all.code, 0);
      const types = new Set(all.json.events.map((e: { type: string }) => e.type));
      for (const type of ['api_client.created', 'token.issued', 'api_client.deleted'])
        assert.ok(types.has(type), type);
      assert.ok(!all.output.includes(created.json.client_secret));

      const issued = await cli(
        'audit',
        'list',
        '--company',
        companyId,
        '--type',
        'token.issued',
        '--limit',
        '1',
        '--json',
      );
      assert.equal(issued.json?.events?.length, 1, issued.output);
      const [event] = issued.json.events;
      assert.equal(event.type, 'token.issued');
      assert.equal(event.subject, created.json.client_id);
      assert.deepEqual(Object.keys(event.details).sort(), ['client_id', 'exp', 'jti', 'kid', 'scopes']);

      const keysEvents = await cli('audit', 'list', '--type', 'signing_key.rotated', '--json');
      assert.ok(keysEvents.json?.events?.length >= 1, keysEvents.output);
      const bad = await cli('audit', 'list', '--limit', '0', '--json');
      assert.equal(bad.code, 2);
    });
  });
}

describe('oauth CLI as a real process next to a running server (sqlite)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ database: 'sqlite' });
  });
  after(() => server.close());

  it('a client created by `node packages/server/bin/parley.js` on the same data folder gets tokens from the server', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PARLEY_DATA_DIR: server.dataDir, LOG_LEVEL: 'warn' };
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    delete env.PARLEY_MASTER_KEYS;
    const run = (args: string[]) =>
      promisify(execFile)(process.execPath, [join(repoRoot, 'packages/server/bin/parley.js'), ...args], {
        cwd: repoRoot,
        env,
        timeout: 60_000,
      });
    const company = JSON.parse((await run(['companies', 'create', '--name', 'Child Co', '--json'])).stdout);
    const created = JSON.parse(
      (
        await run([
          'api-clients',
          'create',
          '--company',
          company.id,
          '--name',
          'From a shell',
          '--scopes',
          'connector:write',
          '--json',
        ])
      ).stdout,
    );
    assert.match(created.client_secret, /^pcs_/);
    const token = await postToken(server, GRANT, {
      authorization: basicAuth(created.client_id, created.client_secret),
    });
    assert.equal(token.status, 200, token.text);
    assert.equal(claimsOf(token.body.access_token).client_id, created.client_id);
    assert.equal(claimsOf(token.body.access_token).company_id, company.id);
  });
});
