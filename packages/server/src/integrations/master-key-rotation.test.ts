import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { runParley, runParleyInProcess } from '@parley/testing/cli';
import {
  checkConnector,
  createConnector,
  createTenant,
  type KeyRecorder,
  putKey,
  startKeyRecorder,
  type Tenant,
  testKey,
} from '@parley/testing/integrations/connectors-fixtures';
import { fetchToken } from '@parley/testing/oauth/oauth-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { sql } from 'kysely';
import { loadMasterKeys, parseMasterKeys, withPrimary } from '../crypto/master-keys.ts';
import { Sealer } from '../crypto/sealing.ts';
import { ConnectorsService } from './connectors.service.ts';

const sealedOf = async (server: TestServer, id: string): Promise<string> =>
  (
    await server.ctx.store.db
      .selectFrom('connectors')
      .select('api_key_sealed')
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
  ).api_key_sealed!;

const masterVersionOf = (envelope: string) => Number(envelope.split('.')[1]);

/** Master versions used by the registered sealed columns (what `master-key rotate` is responsible for). */
async function registeredUsage(server: TestServer): Promise<Record<string, number>> {
  const status = await runParleyInProcess(server, ['master-key', 'status', '--json']);
  const columns = status.json.columns as Array<{ column: string; by_version: Record<string, number> }>;
  assert.ok(columns.some((c) => c.column === 'connectors.api_key_sealed'));
  const total: Record<string, number> = {};
  for (const c of columns) for (const [v, n] of Object.entries(c.by_version)) total[v] = (total[v] ?? 0) + n;
  return total;
}

const onlyVersionsOf = (usage: Record<string, number>): string[] => Object.keys(usage).sort();

/** Opens every given connector's key with exactly `sealer` (a process that knows only these master versions). */
async function openWith(
  server: TestServer,
  sealer: Sealer,
  companyId: string,
  ids: string[],
): Promise<string[]> {
  const service = new ConnectorsService(
    server.ctx.store.db,
    server.ctx.store.dialect,
    sealer,
    server.ctx.audit,
    server.ctx.events,
  );
  return Promise.all(ids.map(async (id) => (await service.readCredentials(companyId, id)).apiKey));
}

/**
 * Checks both connectors every few ms until stopped; every check must succeed with the connector's current key.
 * This is the "no downtime" evidence: the server keeps serving while the CLI re-wraps under it.
 */
function keepChecking(server: TestServer, tenant: Tenant, ids: string[]) {
  let running = true;
  const results: Array<{ ok: boolean; status: number; error?: string }> = [];
  const loop = (async () => {
    const deadline = Date.now() + 120_000;
    while (running && Date.now() < deadline) {
      for (const id of ids) results.push((await checkConnector(server, tenant.auth, id)).body);
      // The pace of this traffic, not a wait for anything.
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return results;
    },
  };
}

describe('master-key rotation with file-based keys, beside a live server (sqlite)', () => {
  let server: TestServer;
  let recorder: KeyRecorder;
  let tenant: Tenant;
  before(async () => {
    server = await startTestServer();
    recorder = await startKeyRecorder();
    tenant = await createTenant(server);
  });
  after(async () => {
    await server.close();
    await recorder.close();
  });

  it('re-wraps every connector key while the server keeps working, then lets the old version be dropped', async () => {
    const keyA = testKey('a');
    const a = await createConnector(server, tenant.companyId, {
      name: 'A',
      url: `${recorder.url}/a`,
      apiKey: keyA,
    });
    const b = await createConnector(server, tenant.companyId, { name: 'B', url: `${recorder.url}/b` });
    const keyB = testKey('b');
    assert.equal((await putKey(server, tenant.auth, b.id, { api_key: keyB })).status, 200);
    await createConnector(server, tenant.companyId, { name: 'no key', url: `${recorder.url}/c` });
    const bBefore = await sealedOf(server, b.id);
    assert.equal(masterVersionOf(bBefore), 1);

    const checks = keepChecking(server, tenant, [a.id, b.id]);
    const rotated = await runParley(server, ['master-key', 'rotate', '--json']);
    const during = await checks.stop();
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.equal(rotated.json.master_key_version, 2);
    assert.equal(rotated.json.source, 'file');
    const connectorsColumn = rotated.json.columns.find(
      (c: { column: string }) => c.column === 'connectors.api_key_sealed',
    );
    assert.deepEqual(
      {
        total: connectorsColumn.total,
        rewrapped: connectorsColumn.rewrapped,
        unreadable: connectorsColumn.unreadable,
      },
      { total: 2, rewrapped: 2, unreadable: [] },
    );
    assert.equal(
      rotated.json.columns.find((c: { column: string }) => c.column === 'integration_secrets.sealed')
        .rewrapped,
      1,
    );
    assert.deepEqual(onlyVersionsOf(await registeredUsage(server)), ['2']);
    assert.ok(!rotated.stdout.includes(keyA) && !rotated.stdout.includes(keyB));

    assert.ok(during.length >= 2, 'checks ran while the CLI worked');
    assert.ok(
      during.every((r) => r.ok),
      JSON.stringify(during.filter((r) => !r.ok)),
    );

    // After: the live server opens the re-wrapped values (it re-reads the key file) and seals new ones with v2.
    assert.equal(masterVersionOf(await sealedOf(server, a.id)), 2);
    const before = recorder.calls.length;
    for (const id of [a.id, b.id])
      assert.equal((await checkConnector(server, tenant.auth, id)).body.ok, true);
    assert.deepEqual(recorder.authorizations().slice(before), [`Bearer ${keyA}`, `Bearer ${keyB}`]);
    const keyA2 = testKey('a2');
    assert.equal((await putKey(server, tenant.auth, a.id, { api_key: keyA2 })).status, 200);
    assert.equal(masterVersionOf(await sealedOf(server, a.id)), 2);

    // A value still wrapped with v1 (here: restored from before the rotation) keeps v1 from being dropped…
    await server.ctx.store.db
      .updateTable('connectors')
      .set({ api_key_sealed: bBefore })
      .where('id', '=', b.id)
      .execute();
    const status = await runParleyInProcess(server, ['master-key', 'status', '--json']);
    assert.deepEqual(
      status.json.columns.find((c: { column: string }) => c.column === 'connectors.api_key_sealed')
        .by_version,
      { 1: 1, 2: 1 },
    );
    const refused = await runParleyInProcess(server, ['master-key', 'retire', '--version', '1', '--json']);
    assert.equal(refused.code, 1);
    assert.equal(refused.json.error.code, 'master_key_in_use');
    assert.match(refused.json.error.message, /connectors\.api_key_sealed/);

    // …until the next rotation re-wraps it. Then version 2 is used by nothing and can go: every registered value
    // opens with version 3 alone.
    const again = await runParleyInProcess(server, ['master-key', 'rotate', '--json']);
    assert.equal(again.json.master_key_version, 3);
    assert.deepEqual(onlyVersionsOf(await registeredUsage(server)), ['3']);
    assert.equal(
      (await runParleyInProcess(server, ['master-key', 'retire', '--version', '3', '--json'])).json.error
        .code,
      'master_key_current',
    );
    const retired = await runParleyInProcess(server, ['master-key', 'retire', '--version', '2', '--json']);
    assert.deepEqual(retired.json, { version: 2, removed: true, source: 'file' });
    const remaining = loadMasterKeys(undefined, server.dataDir).keys;
    assert.ok(!remaining.some((k) => k.version === 2));
    const v3only = new Sealer(remaining.filter((k) => k.version === 3));
    assert.deepEqual(await openWith(server, v3only, tenant.companyId, [a.id, b.id]), [keyA2, keyB]);
    for (const id of [a.id, b.id]) {
      assert.equal((await checkConnector(server, tenant.auth, id)).body.ok, true);
    }
    const events = await server.ctx.audit.list({ type: 'master_key.rotated' });
    assert.equal(events.length, 2);

    // Every registered sealed column moved, OAuth's included: a node started now, knowing only version 3, still
    // authenticates clients (sealed pepper) and signs tokens (sealed signing key).
    assert.deepEqual(
      (await runParleyInProcess(server, ['master-key', 'retire', '--version', '1', '--json'])).json,
      { version: 1, removed: true, source: 'file' },
    );
    const restarted = await startTestServer({ shareWith: server });
    try {
      assert.deepEqual(restarted.ctx.sealer.versions, [3]);
      const fresh = await fetchToken(restarted, tenant.client);
      assert.equal(
        (await checkConnector(restarted, { authorization: `Bearer ${fresh}` }, a.id)).body.ok,
        true,
      );
    } finally {
      await restarted.close();
    }
  });

  it('keeps a version in use while any column nobody registered still holds values sealed with it', async () => {
    const db = server.ctx.store.db;
    await sql`create table scratch_sealed (id text primary key, secret text)`.execute(db);
    try {
      // Make sure an older, non-current version exists (the previous test may have retired all but one).
      assert.equal((await runParleyInProcess(server, ['master-key', 'rotate', '--json'])).code, 0);
      const keys = loadMasterKeys(undefined, server.dataDir).keys;
      const oldest = keys.at(-1)!.version;
      const sealedWithOldest = new Sealer(withPrimary(keys, oldest)).seal('scratch secret', 'scratch|1');
      await sql`insert into scratch_sealed (id, secret) values ('1', ${sealedWithOldest})`.execute(db);
      const status = await runParleyInProcess(server, ['master-key', 'status', '--json']);
      assert.deepEqual(
        status.json.unregistered.find((c: { column: string }) => c.column === 'scratch_sealed.secret'),
        { column: 'scratch_sealed.secret', by_version: { [oldest]: 1 } },
      );
      assert.ok(status.json.versions_in_use.includes(oldest));
      const refused = await runParleyInProcess(server, [
        'master-key',
        'retire',
        '--version',
        String(oldest),
        '--json',
      ]);
      assert.equal(refused.json.error.code, 'master_key_in_use');
      assert.match(refused.json.error.message, /scratch_sealed\.secret.*NOT REGISTERED/s);
      assert.ok(
        loadMasterKeys(undefined, server.dataDir).keys.some((k) => k.version === oldest),
        'nothing was removed',
      );
    } finally {
      await sql`drop table scratch_sealed`.execute(db);
    }
  });
});

describe('master-key rotation with PARLEY_MASTER_KEYS and a rolling restart (postgres)', () => {
  const v1 = `1:${randomBytes(32).toString('base64')}`;
  const v2 = `2:${randomBytes(32).toString('base64')}`;
  const nodes: TestServer[] = [];
  let recorder: KeyRecorder;
  before(async () => {
    recorder = await startKeyRecorder();
  });
  after(async () => {
    for (const node of nodes.reverse()) await node.close();
    await recorder.close();
  });

  it('teaches every node v2 first (v1 still primary), switches sealing to v2, re-wraps, and v1 is then unused', async () => {
    const nodeA = await startTestServer({ database: 'postgres', config: { masterKeys: v1 } });
    nodes.push(nodeA);
    const deployment = {
      publicUrl: nodeA.config.publicUrl,
      oauth: { audience: nodeA.config.oauth.audience },
    };
    const tenant = await createTenant(nodeA);
    const keyX = testKey('x');
    const x = await createConnector(nodeA, tenant.companyId, {
      name: 'X',
      url: `${recorder.url}/x`,
      apiKey: keyX,
    });
    const y = await createConnector(nodeA, tenant.companyId, { name: 'Y', url: `${recorder.url}/y` });

    // Step 1: node B knows v2 but still seals with v1, so node A (v1 only) opens what B writes.
    const nodeB = await startTestServer({
      database: 'postgres',
      shareWith: nodeA,
      config: { ...deployment, masterKeys: `${v2},${v1}`, masterKeyPrimary: 1 },
    });
    nodes.push(nodeB);
    const keyY = testKey('y');
    assert.equal((await putKey(nodeB, tenant.auth, y.id, { api_key: keyY })).status, 200);
    assert.equal(masterVersionOf(await sealedOf(nodeA, y.id)), 1);
    assert.equal((await checkConnector(nodeA, tenant.auth, y.id)).body.ok, true);
    assert.equal(recorder.calls.at(-1)!.authorization, `Bearer ${keyY}`);

    // Step 2: every node knows v2 now (A replaced by C); C seals with v2, and B opens it.
    const nodeC = await startTestServer({
      database: 'postgres',
      shareWith: nodeA,
      config: { ...deployment, masterKeys: `${v2},${v1}` },
    });
    nodes.push(nodeC);
    const keyX2 = testKey('x2');
    assert.equal((await putKey(nodeC, tenant.auth, x.id, { api_key: keyX2 })).status, 200);
    assert.equal(masterVersionOf(await sealedOf(nodeC, x.id)), 2);
    assert.equal((await checkConnector(nodeB, tenant.auth, x.id)).body.ok, true);
    assert.equal(recorder.calls.at(-1)!.authorization, `Bearer ${keyX2}`);

    // Step 3: re-wrap what is still on v1, while node C serves.
    const checks = keepChecking(nodeC, tenant, [x.id, y.id]);
    const rotated = await runParley(nodeC, ['master-key', 'rotate', '--json'], {
      PARLEY_MASTER_KEYS: `${v2},${v1}`,
    });
    const during = await checks.stop();
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.equal(rotated.json.source, 'config');
    const column = rotated.json.columns.find(
      (c: { column: string }) => c.column === 'connectors.api_key_sealed',
    );
    assert.deepEqual([column.rewrapped, column.already_current], [1, 1]);
    assert.ok(during.length >= 2 && during.every((r) => r.ok), JSON.stringify(during.filter((r) => !r.ok)));

    // Step 4: no registered value needs v1 any more; a process with only v2 opens every connector key.
    assert.deepEqual(onlyVersionsOf(await registeredUsage(nodeC)), ['2']);
    assert.deepEqual(await openWith(nodeC, new Sealer(parseMasterKeys(v2)), tenant.companyId, [x.id, y.id]), [
      keyX2,
      keyY,
    ]);
    for (const id of [x.id, y.id]) assert.equal((await checkConnector(nodeC, tenant.auth, id)).body.ok, true);
  });
});
