import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { type PortalTestClient, startPortalWorld } from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';

for (const database of TEST_DATABASES) {
  describe(`portal connectors (${database})`, () => {
    let server: TestServer;
    let upstream: Server;
    let upstreamUrl: string;
    const seenAuth: string[] = [];
    let acme: PortalTestClient;
    let globex: PortalTestClient;
    let agent: PortalTestClient;
    before(async () => {
      // A real HTTP endpoint on 127.0.0.1 that records the bearer key the connection test sends.
      upstream = createServer((req, res) => {
        seenAuth.push(String(req.headers.authorization));
        res.writeHead(req.headers.authorization === 'Bearer key-two' ? 200 : 401).end();
      });
      await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
      upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}/hook`;
      ({ server, acme, globex, agent } = await startPortalWorld(database));
    });
    after(async () => {
      await server.close();
      await new Promise((r) => upstream.close(r));
    });

    it('creates a connector, rotates its key write-only, and tests the connection with the new key', async () => {
      const created = await acme.post('/connectors', {
        name: 'Bot hook',
        type: 'webhook',
        url: upstreamUrl,
        api_key: 'key-one',
      });
      assert.equal(created.status, 201);
      assert.equal(created.body.api_key_set, true);
      assert.equal(created.body.key_version, 1);
      const id = created.body.id;

      const before = await acme.post(`/connectors/${id}/check`);
      assert.equal(before.status, 200);
      assert.equal(before.body.ok, false);
      assert.equal(before.body.status, 401);

      const rotated = await acme.put(`/connectors/${id}/api-key`, { api_key: 'key-two' });
      assert.equal(rotated.status, 200);
      assert.equal(rotated.body.key_version, 2);
      assert.equal(rotated.body.changed, true);
      assert.ok(!rotated.text.includes('key-two'));

      const check = await acme.post(`/connectors/${id}/check`);
      assert.equal(check.body.ok, true);
      assert.equal(check.body.status, 200);
      assert.equal(check.body.key_version, 2);
      assert.deepEqual(seenAuth.slice(-2), ['Bearer key-one', 'Bearer key-two']);

      const list = await acme.get('/connectors');
      const row = list.body.items.find((c: { id: string }) => c.id === id);
      assert.deepEqual(Object.keys(row).sort(), [
        'api_key_set',
        'created_at',
        'id',
        'key_version',
        'name',
        'rotated_at',
        'type',
        'url',
      ]);
      assert.equal(row.key_version, 2);
      assert.ok(row.rotated_at);
      assert.ok(!list.text.includes('key-one') && !list.text.includes('key-two'), 'keys are never listed');
      assert.deepEqual(list.body.types.map((t: { name: string }) => t.name).sort(), [
        'http',
        'openai',
        'webhook',
      ]);
      const logs = server.logs.join('\n');
      assert.ok(!logs.includes('key-one') && !logs.includes('key-two'), 'keys are never logged');
      const events = await server.ctx.audit.list({ subject: id });
      assert.ok(events.some((e) => e.type === 'connector.api_key_rotated' && e.actor?.startsWith('user:')));
      assert.ok(!JSON.stringify(events).includes('key-two'));
    });

    it('keeps companies apart', async () => {
      const created = await acme.post('/connectors', { name: 'Private', type: 'webhook', url: upstreamUrl });
      const id = created.body.id;
      assert.equal(created.body.api_key_set, false);
      assert.ok(
        !(await globex.get('/connectors?limit=100')).body.items.some((c: { id: string }) => c.id === id),
      );
      const rotate = await globex.put(`/connectors/${id}/api-key`, { api_key: 'stolen' });
      assert.equal(rotate.status, 404);
      assert.equal(rotate.body.code, 'connector_not_found');
      assert.equal((await globex.post(`/connectors/${id}/check`)).status, 404);
      assert.equal((await globex.del(`/connectors/${id}`)).status, 404);
      assert.equal(
        (await server.ctx.connectors.get((await acme.get('/company')).body.id, id)).apiKeySet,
        false,
      );
    });

    it('shows validation errors per field', async () => {
      const badUrl = await acme.post('/connectors', { name: 'x', type: 'webhook', url: 'not a url' });
      assert.equal(badUrl.status, 400);
      assert.equal(badUrl.body.code, 'invalid_url');
      assert.equal(badUrl.body.errors[0].field, 'url');
      const badType = await acme.post('/connectors', { name: 'x', type: 'carrier-pigeon', url: upstreamUrl });
      assert.equal(badType.body.code, 'invalid_type');
      const id = (await acme.get('/connectors')).body.items[0].id;
      const badKey = await acme.put(`/connectors/${id}/api-key`, { api_key: 'has spaces' });
      assert.equal(badKey.body.code, 'invalid_api_key');
      assert.ok(!badKey.text.includes('has spaces'), 'a refused key is not echoed');
    });

    it('refuses agents and forged requests', async () => {
      assert.equal((await agent.get('/connectors')).status, 403);
      const id = (await acme.get('/connectors')).body.items[0].id;
      assert.equal((await agent.put(`/connectors/${id}/api-key`, { api_key: 'agent-key' })).status, 403);
      const forged = await acme.put(`/connectors/${id}/api-key`, { api_key: 'forged-key' }, { csrf: null });
      assert.equal(forged.status, 403);
      assert.equal(forged.body.code, 'csrf_failed');
      assert.equal((await acme.get('/connectors')).body.items[0].key_version, 2, 'no rotation happened');
    });

    it('deletes a connector', async () => {
      const created = await acme.post('/connectors', { name: 'Temp', type: 'webhook', url: upstreamUrl });
      assert.equal((await acme.del(`/connectors/${created.body.id}`)).status, 204);
      assert.ok(
        !(await acme.get('/connectors?limit=100')).body.items.some(
          (c: { id: string }) => c.id === created.body.id,
        ),
      );
    });
  });
}
