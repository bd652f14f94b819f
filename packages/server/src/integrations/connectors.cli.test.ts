import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runParley, runParleyInProcess } from '@parley/testing/cli';
import { TEST_DATABASES } from '@parley/testing/databases';
import {
  checkConnector,
  createTenant,
  type KeyRecorder,
  startKeyRecorder,
  type Tenant,
  testKey,
} from '@parley/testing/integrations/connectors-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';

for (const database of TEST_DATABASES) {
  describe(`connectors CLI (${database})`, () => {
    let server: TestServer;
    let recorder: KeyRecorder;
    let tenant: Tenant;
    before(async () => {
      server = await startTestServer({ database });
      recorder = await startKeyRecorder();
      tenant = await createTenant(server);
    });
    after(async () => {
      await server.close();
      await recorder.close();
    });

    it('creates, lists and deletes connectors with --json; the key is never printed and the live server uses it', async () => {
      const key = testKey('cli');
      const created = await runParley(server, [
        'connectors',
        'create',
        '--company',
        tenant.companyId,
        '--name',
        'CLI bot',
        '--type',
        'webhook',
        '--url',
        `${recorder.url}/cli`,
        '--api-key',
        key,
        '--json',
      ]);
      assert.equal(created.code, 0, created.stderr);
      assert.deepEqual(Object.keys(created.json).sort(), ['id', 'name', 'type']);
      assert.deepEqual([created.json.name, created.json.type], ['CLI bot', 'webhook']);
      const id = created.json.id as string;

      const listed = await runParleyInProcess(server, [
        'connectors',
        'list',
        '--company',
        tenant.companyId,
        '--json',
      ]);
      assert.equal(listed.code, 0, listed.stderr);
      const row = listed.json.connectors.find((c: { id: string }) => c.id === id);
      assert.deepEqual(
        {
          api_key_set: row.api_key_set,
          key_version: row.key_version,
          url: row.url,
          has_rotated_at: typeof row.rotated_at,
        },
        { api_key_set: true, key_version: 1, url: `${recorder.url}/cli`, has_rotated_at: 'string' },
      );
      for (const run of [created, listed]) assert.ok(!run.stdout.includes(key) && !run.stderr.includes(key));

      // The server (another process) opens the key the CLI sealed.
      const check = await checkConnector(server, tenant.auth, id);
      assert.equal(check.body.ok, true);
      assert.equal(recorder.calls.at(-1)!.authorization, `Bearer ${key}`);

      const human = await runParleyInProcess(server, ['connectors', 'list', '--company', tenant.companyId]);
      assert.match(human.stdout, /CLI bot/);
      assert.ok(!human.stdout.includes(key));

      const deleted = await runParleyInProcess(server, [
        'connectors',
        'delete',
        '--company',
        tenant.companyId,
        '--connector-id',
        id,
        '--json',
      ]);
      assert.deepEqual(deleted.json, { id, deleted: true });
      assert.equal((await checkConnector(server, tenant.auth, id)).status, 404);
    });
  });
}

// Error reporting does not depend on the database: shown once, on SQLite, through the CLI's entry function.
describe('connectors CLI errors (sqlite)', () => {
  let server: TestServer;
  let tenant: Tenant;
  before(async () => {
    server = await startTestServer();
    tenant = await createTenant(server);
  });
  after(() => server.close());

  it('reports errors as {error:{code}} with a non-zero exit code', async () => {
    const unknownCompany = await runParleyInProcess(server, [
      'connectors',
      'create',
      '--company',
      '00000000-0000-4000-8000-000000000000',
      '--name',
      'x',
      '--type',
      'webhook',
      '--url',
      'https://x.example',
      '--json',
    ]);
    assert.equal(unknownCompany.code, 1);
    assert.equal(unknownCompany.json.error.code, 'company_not_found');

    const badType = await runParleyInProcess(server, [
      'connectors',
      'create',
      '--company',
      tenant.companyId,
      '--name',
      'x',
      '--type',
      'smtp',
      '--json',
    ]);
    assert.equal(badType.json.error.code, 'invalid_type');

    const badKey = await runParleyInProcess(server, [
      'connectors',
      'create',
      '--company',
      tenant.companyId,
      '--name',
      'x',
      '--type',
      'openai',
      '--api-key',
      'two words',
      '--json',
    ]);
    assert.equal(badKey.json.error.code, 'invalid_api_key');
    assert.ok(!badKey.stdout.includes('two words'), 'the rejected key is not echoed either');

    const usage = await runParleyInProcess(server, [
      'connectors',
      'create',
      '--company',
      tenant.companyId,
      '--json',
    ]);
    assert.equal(usage.code, 2);
    assert.equal(usage.json.error.code, 'usage');
  });
});
