import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import {
  type PortalTestClient,
  requestToken,
  startPortalWorld,
} from '@parley/testing/portal/portal-fixtures';
import type { TestServer } from '@parley/testing/test-server';

for (const database of TEST_DATABASES) {
  describe(`portal API clients (${database})`, () => {
    let server: TestServer;
    let acme: PortalTestClient;
    let globex: PortalTestClient;
    let agent: PortalTestClient;
    before(async () => {
      ({ server, acme, globex, agent } = await startPortalWorld(database));
    });
    after(() => server.close());

    it('creates a client, shows its secret once, and the secret works at the token endpoint until deletion', async () => {
      const created = await acme.post('/api-clients', {
        name: 'CI bot',
        scopes: ['connector:read', 'connector:write'],
      });
      assert.equal(created.status, 201);
      assert.equal(created.headers.get('cache-control'), 'no-store');
      const { client_id, client_secret } = created.body;
      assert.ok(client_id && client_secret);
      assert.deepEqual(created.body.scopes, ['connector:read', 'connector:write']);

      const list = await acme.get('/api-clients');
      assert.equal(list.status, 200);
      const row = list.body.items.find((c: { client_id: string }) => c.client_id === client_id);
      assert.equal(row.name, 'CI bot');
      assert.equal(row.last_used_at, null);
      assert.ok(!list.text.includes(client_secret), 'the list never holds the secret');
      assert.deepEqual(list.body.available_scopes, [
        'connector:write',
        'connector:read',
        'conversations:read',
        'conversations:write',
        'webhooks:read',
        'webhooks:write',
        'privacy:write',
        'knowledge:read',
        'knowledge:write',
        'digital_employees:read',
        'digital_employees:write',
      ]);

      const issued = await requestToken(server, client_id, client_secret);
      assert.equal(issued.status, 200);
      assert.equal(issued.body.token_type, 'Bearer');
      const used = (await acme.get('/api-clients')).body.items.find(
        (c: { client_id: string }) => c.client_id === client_id,
      );
      assert.ok(used.last_used_at, 'last used is shown after a token was issued');

      assert.equal((await acme.del(`/api-clients/${client_id}`)).status, 204);
      assert.equal((await requestToken(server, client_id, client_secret)).status, 401);
      assert.ok(
        !(await acme.get('/api-clients')).body.items.some(
          (c: { client_id: string }) => c.client_id === client_id,
        ),
      );
      assert.ok(!server.logs.join('\n').includes(client_secret), 'the secret never reaches the log');

      const events = await server.ctx.audit.list({ subject: client_id });
      const portalEvents = events.filter((e) => e.type.startsWith('api_client.'));
      assert.deepEqual(portalEvents.map((e) => e.type).sort(), ['api_client.created', 'api_client.deleted']);
      assert.ok(portalEvents.every((e) => e.actor?.startsWith('user:')));
      assert.ok(!JSON.stringify(events).includes(client_secret));
    });

    it('keeps companies apart: another admin neither sees nor deletes the client', async () => {
      const created = await acme.post('/api-clients', { name: 'Acme only', scopes: ['connector:read'] });
      const { client_id, client_secret } = created.body;
      const seen = await globex.get('/api-clients?limit=100');
      assert.ok(!seen.body.items.some((c: { client_id: string }) => c.client_id === client_id));
      const del = await globex.del(`/api-clients/${client_id}`);
      assert.equal(del.status, 404);
      assert.equal(del.body.code, 'api_client_not_found');
      assert.equal((await requestToken(server, client_id, client_secret)).status, 200, 'still active');
    });

    it('validates the form and answers problem codes', async () => {
      const blank = await acme.post('/api-clients', { name: '  ', scopes: ['connector:read'] });
      assert.equal(blank.status, 400);
      assert.equal(blank.body.code, 'invalid_name');
      const noScope = await acme.post('/api-clients', { name: 'x', scopes: [] });
      assert.equal(noScope.body.code, 'invalid_scopes');
      const unknown = await acme.post('/api-clients', { name: 'x', scopes: ['admin:all'] });
      assert.equal(unknown.body.code, 'invalid_scopes');
      const shape = await acme.post('/api-clients', { name: 'x' });
      assert.equal(shape.body.code, 'validation_failed');
      assert.deepEqual(shape.body.errors, [
        { field: 'scopes', message: "must have required property 'scopes'" },
      ]);
    });

    it('creates a client whose DPoP is required (RFC 9449): a token request without a proof is refused', async () => {
      const created = await acme.post('/api-clients', {
        name: 'Bound',
        scopes: ['connector:read'],
        dpop: 'required',
      });
      assert.equal(created.status, 201);
      assert.equal(created.body.dpop, 'required');
      const token = await requestToken(server, created.body.client_id, created.body.client_secret);
      assert.equal(token.status, 400);
      assert.equal(token.body.error, 'invalid_dpop_proof');
      const bad = await acme.post('/api-clients', { name: 'x', scopes: ['connector:read'], dpop: 'always' });
      assert.equal(bad.body.code, 'validation_failed');
    });

    it('pages the list', async () => {
      for (const name of ['p1', 'p2', 'p3'])
        await globex.post('/api-clients', { name, scopes: ['connector:read'] });
      const first = await globex.get('/api-clients?limit=2&offset=0');
      assert.equal(first.body.total, 3);
      assert.deepEqual(
        first.body.items.map((c: { name: string }) => c.name),
        ['p1', 'p2'],
      );
      const second = await globex.get('/api-clients?limit=2&offset=2');
      assert.deepEqual(
        second.body.items.map((c: { name: string }) => c.name),
        ['p3'],
      );
      assert.equal((await globex.get('/api-clients?limit=abc')).body.code, 'validation_failed');
    });

    it('rotates a secret with overlap, lists secrets with last use, revokes the old one', async () => {
      const created = await acme.post('/api-clients', { name: 'Rotated', scopes: ['connector:read'] });
      const { client_id, client_secret: oldSecret } = created.body;
      assert.equal((await requestToken(server, client_id, oldSecret)).status, 200);

      const rotated = await acme.post(`/api-clients/${client_id}/secrets`, { old_expires_in_seconds: 3600 });
      assert.equal(rotated.status, 201);
      assert.equal(rotated.headers.get('cache-control'), 'no-store');
      const newSecret = rotated.body.client_secret;
      assert.match(newSecret, /^pcs_/);
      assert.equal(rotated.body.secret_id.startsWith('psk_'), true);
      assert.equal((await requestToken(server, client_id, oldSecret)).status, 200);
      assert.equal((await requestToken(server, client_id, newSecret)).status, 200);

      await server.ctx.oauth.clients.flushUsage();
      const list = await acme.get(`/api-clients/${client_id}/secrets`);
      assert.equal(list.status, 200);
      assert.equal(list.body.secrets.length, 2);
      assert.ok(list.body.secrets.every((s: { last_used_at: string | null }) => s.last_used_at));
      assert.ok(!list.text.includes(oldSecret) && !list.text.includes(newSecret));
      const oldId = list.body.secrets.find((s: { id: string }) => s.id !== rotated.body.secret_id).id;

      // Another company's admin cannot touch it.
      assert.equal((await globex.get(`/api-clients/${client_id}/secrets`)).status, 404);
      assert.equal((await globex.del(`/api-clients/${client_id}/secrets/${oldId}`)).status, 404);
      assert.equal((await agent.post(`/api-clients/${client_id}/secrets`, {})).status, 403);

      assert.equal((await acme.del(`/api-clients/${client_id}/secrets/${oldId}`)).status, 204);
      assert.equal((await requestToken(server, client_id, oldSecret)).status, 401);
      assert.equal((await requestToken(server, client_id, newSecret)).status, 200);
      const last = await acme.del(`/api-clients/${client_id}/secrets/${rotated.body.secret_id}`);
      assert.equal(last.status, 409);
      assert.equal(last.body.code, 'last_client_secret');
    });

    it('sets a client’s quotas (null: the default), shown in the list and applied at the token endpoint', async () => {
      const created = await acme.post('/api-clients', { name: 'Quota', scopes: ['connector:read'] });
      const { client_id, client_secret } = created.body;
      const set = await acme.put(`/api-clients/${client_id}/quotas`, { tokens_per_minute: 1 });
      assert.equal(set.status, 200, set.text);
      assert.deepEqual(set.body, {
        client_id,
        quotas: { tokens_per_minute: 1, api_calls_per_minute: null },
      });
      const row = (await acme.get('/api-clients')).body.items.find(
        (c: { client_id: string }) => c.client_id === client_id,
      );
      assert.deepEqual(row.quotas, { tokens_per_minute: 1, api_calls_per_minute: null });
      assert.equal((await requestToken(server, client_id, client_secret)).status, 200);
      const refused = await requestToken(server, client_id, client_secret);
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.get('ratelimit-policy'), '"tokens";q=1;w=60');

      const invalid = await acme.put(`/api-clients/${client_id}/quotas`, { api_calls_per_minute: 0 });
      assert.equal(invalid.status, 400);
      assert.equal(
        (await globex.put(`/api-clients/${client_id}/quotas`, { tokens_per_minute: 5 })).status,
        404,
      );
      assert.equal(
        (await agent.put(`/api-clients/${client_id}/quotas`, { tokens_per_minute: 5 })).status,
        403,
      );
      const back = await acme.put(`/api-clients/${client_id}/quotas`, { tokens_per_minute: null });
      assert.deepEqual(back.body.quotas, { tokens_per_minute: null, api_calls_per_minute: null });
    });

    it('refuses agents and requests without the CSRF token', async () => {
      assert.equal((await agent.get('/api-clients')).status, 403);
      assert.equal(
        (await agent.post('/api-clients', { name: 'sneaky', scopes: ['connector:write'] })).status,
        403,
      );
      const noCsrf = await acme.post(
        '/api-clients',
        { name: 'forged', scopes: ['connector:write'] },
        { csrf: null },
      );
      assert.equal(noCsrf.status, 403);
      assert.equal(noCsrf.body.code, 'csrf_failed');
      assert.ok(
        !(await acme.get('/api-clients?limit=100')).body.items.some(
          (c: { name: string }) => c.name === 'forged',
        ),
      );
    });
  });
}
