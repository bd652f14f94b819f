import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { PASSWORD, type PortalTestClient, startPortalWorld } from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';

for (const database of TEST_DATABASES) {
  describe(`portal audit log (${database})`, () => {
    let server: TestServer;
    let acme: PortalTestClient;
    let globex: PortalTestClient;
    let agent: PortalTestClient;
    let secret = '';
    before(async () => {
      ({ server, acme, globex, agent } = await startPortalWorld(database));
      secret = (await acme.post('/api-clients', { name: 'Audited', scopes: ['connector:write'] })).body
        .client_secret;
      const connector = await acme.post('/connectors', {
        name: 'Hook',
        type: 'webhook',
        url: 'http://127.0.0.1:9/x',
        api_key: 'audit-key-1',
      });
      await acme.put(`/connectors/${connector.body.id}/api-key`, { api_key: 'audit-key-2' });
      for (let i = 0; i < 5; i++)
        await acme.put('/company/allowed-origins', { allowed_origins: [`https://s${i}.example`] });
    });
    after(() => server.close());

    it('lists the company’s events newest first with readable actors and no secret', async () => {
      const res = await acme.get('/audit?limit=100');
      assert.equal(res.status, 200);
      const types = res.body.items.map((e: { type: string }) => e.type);
      for (const t of [
        'portal.signed_in',
        'api_client.created',
        'connector.created',
        'connector.api_key_rotated',
        'company.allowed_origins_changed',
      ]) {
        assert.ok(types.includes(t), t);
      }
      const times = res.body.items.map((e: { created_at: string }) => e.created_at);
      assert.deepEqual(times, [...times].sort().reverse());
      assert.ok(res.body.items.some((e: { actor_label: string }) => e.actor_label === 'admin@acme.test'));
      for (const s of [secret, 'audit-key-1', 'audit-key-2', PASSWORD])
        assert.ok(!res.text.includes(s), 'no secret in the audit log');
      assert.ok(!res.text.includes('admin@globex.test'), 'no event of another company');
    });

    it('filters by type and subject and pages with a cursor', async () => {
      const filtered = await acme.get('/audit?type=company.allowed_origins_changed&limit=2');
      assert.equal(filtered.body.items.length, 2);
      assert.ok(filtered.body.next_before);
      const seen = [...filtered.body.items];
      let before = filtered.body.next_before;
      for (let i = 0; i < 5 && before; i++) {
        const next = await acme.get(
          `/audit?type=company.allowed_origins_changed&limit=2&before=${encodeURIComponent(before)}`,
        );
        seen.push(...next.body.items);
        before = next.body.next_before;
      }
      assert.equal(seen.length, 5);
      assert.equal(new Set(seen.map((e: { id: string }) => e.id)).size, 5);
      const clientId = (await acme.get('/api-clients')).body.items[0].client_id;
      const bySubject = await acme.get(`/audit?subject=${clientId}`);
      assert.deepEqual(
        bySubject.body.items.map((e: { type: string }) => e.type),
        ['api_client.created'],
      );
      assert.equal((await acme.get('/audit?before=yesterday')).body.code, 'validation_failed');
    });

    it('shows nothing of another company and refuses agents', async () => {
      const other = await globex.get('/audit?limit=100');
      assert.ok(other.body.items.every((e: { type: string }) => e.type === 'portal.signed_in'));
      assert.equal((await agent.get('/audit')).status, 403);
    });
  });
}
