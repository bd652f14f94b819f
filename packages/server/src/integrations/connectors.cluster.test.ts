import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
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
import { startTestServer, type TestServer } from '@parley/testing/test-server';

// Two nodes sharing one PostgreSQL schema: keys are read at call time, so no node ever uses a stale key.
describe('connector key rotation across two nodes (postgres)', () => {
  let nodeA: TestServer;
  let nodeB: TestServer;
  let recorder: KeyRecorder;
  let tenant: Tenant;
  before(async () => {
    nodeA = await startTestServer({ database: 'postgres' });
    nodeB = await startTestServer({
      database: 'postgres',
      shareWith: nodeA,
      config: { publicUrl: nodeA.config.publicUrl, oauth: { audience: nodeA.config.oauth.audience } },
    });
    recorder = await startKeyRecorder();
    tenant = await createTenant(nodeA);
  });
  after(async () => {
    await nodeB.close();
    await nodeA.close();
    await recorder.close();
  });

  it('uses the key rotated on node A for the very next call made by node B', async () => {
    const c = await createConnector(nodeA, tenant.companyId, {
      name: 'shared',
      url: `${recorder.url}/shared`,
      apiKey: testKey('first'),
    });
    // Warm node B up with the first key, so a cache (if there were one) would hold it.
    assert.equal((await checkConnector(nodeB, tenant.auth, c.id)).body.ok, true);
    for (let round = 0; round < 4; round++) {
      const [writer, reader] = round % 2 === 0 ? [nodeA, nodeB] : [nodeB, nodeA];
      const key = testKey(`round${round}`);
      const put = await putKey(writer, tenant.auth, c.id, { api_key: key });
      assert.equal(put.status, 200);
      const check = await checkConnector(reader, tenant.auth, c.id);
      assert.equal(check.body.ok, true);
      assert.equal(check.body.key_version, put.body.key_version);
      assert.equal(recorder.calls.at(-1)!.authorization, `Bearer ${key}`, `round ${round}`);
    }
  });

  it('serialises 20 concurrent rotations sent to both nodes: one version each, and both nodes then use the winner', async () => {
    const c = await createConnector(nodeA, tenant.companyId, {
      name: 'raced',
      url: `${recorder.url}/raced`,
      apiKey: testKey('start'),
    });
    const keys = Array.from({ length: 20 }, (_, i) => testKey(`node-race${i}`));
    const results = await Promise.all(
      keys.map((api_key, i) => putKey(i % 2 ? nodeB : nodeA, tenant.auth, c.id, { api_key })),
    );
    assert.deepEqual(
      results.map((r) => r.body.key_version).sort((a, b) => a - b),
      Array.from({ length: 20 }, (_, i) => i + 2),
    );
    const winner = keys[results.findIndex((r) => r.body.key_version === 21)]!;
    const before = recorder.calls.length;
    for (const node of [nodeA, nodeB, nodeA, nodeB]) {
      assert.equal((await checkConnector(node, tenant.auth, c.id)).body.key_version, 21);
    }
    assert.ok(recorder.calls.slice(before).every((call) => call.authorization === `Bearer ${winner}`));
    const events = await nodeB.ctx.audit.list({ type: 'connector.api_key_rotated', subject: c.id });
    assert.equal(events.length, 20);
  });
});
