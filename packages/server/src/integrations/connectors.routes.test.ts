import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { http } from '@parley/testing/http-client';
import {
  checkConnector,
  createConnector,
  createTenant,
  type KeyRecorder,
  listConnectors,
  putKey,
  startKeyRecorder,
  type Tenant,
  testKey,
} from '@parley/testing/integrations/connectors-fixtures';
import { createTestClient, fetchToken } from '@parley/testing/oauth/oauth-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

for (const database of TEST_DATABASES) {
  describe(`connectors API (${database})`, () => {
    let server: TestServer;
    let recorder: KeyRecorder;
    let tenant: Tenant;
    let other: Tenant;
    before(async () => {
      server = await startTestServer({ database, config: { integrations: { checkTimeoutMs: 300 } } });
      recorder = await startKeyRecorder();
      tenant = await createTenant(server);
      other = await createTenant(server);
    });
    after(async () => {
      await server.close();
      await recorder.close();
    });

    const connector = async (owner: Tenant = tenant, path = '/hook', apiKey?: string) =>
      createConnector(server, owner.companyId, { name: `c-${path}`, url: `${recorder.url}${path}`, apiKey });

    it("lists the caller company's connectors with key metadata only", async () => {
      const key = testKey('listed');
      const mine = await connector(tenant, '/listed', key);
      const theirs = await connector(other, '/theirs');
      const res = await listConnectors(server, tenant.auth);
      assert.equal(res.status, 200);
      const row = res.body.connectors.find((c: { id: string }) => c.id === mine.id);
      assert.deepEqual(row, {
        id: mine.id,
        name: mine.name,
        type: 'webhook',
        url: `${recorder.url}/listed`,
        api_key_set: true,
        key_version: 1,
        rotated_at: mine.rotatedAt,
        created_at: mine.createdAt,
      });
      assert.ok(
        !res.body.connectors.some((c: { id: string }) => c.id === theirs.id),
        "another company's connector is not listed",
      );
      assert.ok(!res.text.includes(key));
    });

    it('rotates: 200 with metadata only, and the very next call carries the new key, never the old one again', async () => {
      const oldKey = testKey('old');
      const c = await connector(tenant, '/rotate', oldKey);
      const check = await checkConnector(server, tenant.auth, c.id);
      assert.equal(check.body.ok, true, `the check before the rotation answered ${check.text}`);
      assert.equal(recorder.calls.at(-1)!.authorization, `Bearer ${oldKey}`);

      const newer = testKey('new');
      const res = await putKey(server, tenant.auth, c.id, { api_key: newer });
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body).sort(), [
        'changed',
        'connector_id',
        'key_version',
        'rotated_at',
      ]);
      assert.equal(res.body.connector_id, c.id);
      assert.equal(res.body.key_version, 2);
      assert.equal(res.body.changed, true);
      assert.equal(res.headers.get('etag'), '"2"');
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.ok(!res.text.includes(newer) && !res.text.includes(oldKey));

      const before = recorder.calls.length;
      for (let i = 0; i < 3; i++) {
        const check = await checkConnector(server, tenant.auth, c.id);
        assert.deepEqual(
          { ok: check.body.ok, status: check.body.status, v: check.body.key_version },
          { ok: true, status: 200, v: 2 },
        );
      }
      const after = recorder.calls.slice(before).filter((call) => call.path === '/rotate');
      assert.equal(after.length, 3);
      assert.ok(after.every((call) => call.authorization === `Bearer ${newer}`));
      assert.equal(after[0]!.method, 'GET');
    });

    it('records connector.api_key_rotated with company, connector, client, token and version — never the key', async () => {
      const c = await connector();
      const key = testKey('audited');
      const res = await putKey(server, tenant.auth, c.id, { api_key: key });
      const [event, ...rest] = await server.ctx.audit.list({
        companyId: tenant.companyId,
        type: 'connector.api_key_rotated',
        subject: c.id,
      });
      assert.equal(rest.length, 0);
      assert.equal(event!.actor, `client:${tenant.client.clientId}`);
      assert.equal(event!.ip, '127.0.0.1');
      assert.equal(event!.details.client_id, tenant.client.clientId);
      assert.equal(event!.details.key_version, res.body.key_version);
      assert.equal(event!.details.previous_version, 0);
      assert.match(String(event!.details.token_id), /.+/);
      assert.ok(!JSON.stringify(event).includes(key));
    });

    it('treats a repeated PUT of the current key as harmless: same version, changed false, no new event', async () => {
      const c = await connector();
      const key = testKey('same');
      const first = await putKey(server, tenant.auth, c.id, { api_key: key });
      const second = await putKey(server, tenant.auth, c.id, { api_key: key });
      assert.equal(second.status, 200);
      assert.deepEqual(second.body, { ...first.body, changed: false });
      const events = await server.ctx.audit.list({ type: 'connector.api_key_rotated', subject: c.id });
      assert.equal(events.length, 1);
    });

    it('supports If-Match on the key version (412 on a lost update)', async () => {
      const c = await connector();
      const v1 = await putKey(server, tenant.auth, c.id, { api_key: testKey() }, { 'if-match': '"0"' });
      assert.equal(v1.status, 200);
      const stale = await putKey(server, tenant.auth, c.id, { api_key: testKey() }, { 'if-match': '"0"' });
      assert.equal(stale.status, 412);
      assert.equal(stale.body.code, 'precondition_failed');
      assert.equal(stale.body.key_version, 1);
      assert.equal(
        (await putKey(server, tenant.auth, c.id, { api_key: testKey() }, { 'if-match': 'W/"1"' })).status,
        412,
      );
      assert.equal(
        (await putKey(server, tenant.auth, c.id, { api_key: testKey() }, { 'if-match': '"7", "1"' })).status,
        200,
      );
      assert.equal(
        (await putKey(server, tenant.auth, c.id, { api_key: testKey() }, { 'if-match': '*' })).status,
        200,
      );
      assert.equal((await server.ctx.connectors.get(tenant.companyId, c.id)).keyVersion, 3);
    });

    it('rejects every invalid body with a 400 problem and a stable code, storing nothing', async () => {
      const c = await connector();
      const cases: Array<[string, unknown, string, string | undefined]> = [
        ['missing api_key', {}, 'validation_failed', 'api_key'],
        ['empty', { api_key: '' }, 'validation_failed', 'api_key'],
        ['number', { api_key: 12345 }, 'validation_failed', 'api_key'],
        ['null', { api_key: null }, 'validation_failed', 'api_key'],
        ['too long', { api_key: 'k'.repeat(4097) }, 'validation_failed', 'api_key'],
        ['control character', { api_key: 'abc\u0000def' }, 'validation_failed', 'api_key'],
        ['newline', { api_key: 'abc\ndef' }, 'validation_failed', 'api_key'],
        ['inner space', { api_key: 'abc def' }, 'validation_failed', 'api_key'],
        ['leading space', { api_key: ' abcdef' }, 'validation_failed', 'api_key'],
        ['non-ASCII', { api_key: 'clé-secrète' }, 'validation_failed', 'api_key'],
        ['unknown field', { api_key: testKey(), version: 3 }, 'validation_failed', 'version'],
        ['array body', [{ api_key: testKey() }], 'validation_failed', undefined],
        ['string body', '"just-a-string"', 'validation_failed', undefined],
        ['invalid JSON', '{"api_key": ', 'invalid_json', undefined],
        ['empty body', '', 'invalid_json', undefined],
      ];
      for (const [name, body, code, field] of cases) {
        const res = await putKey(server, tenant.auth, c.id, body);
        assert.equal(res.status, 400, name);
        assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/, name);
        assert.equal(res.body.code, code, name);
        assert.equal(res.body.status, 400, name);
        if (field)
          assert.ok(
            res.body.errors.some((e: { field: string }) => e.field === field),
            `${name}: ${res.text}`,
          );
      }
      // The longest accepted key works.
      assert.equal((await putKey(server, tenant.auth, c.id, { api_key: 'k'.repeat(4096) })).status, 200);
      const events = await server.ctx.audit.list({ type: 'connector.api_key_rotated', subject: c.id });
      assert.equal(events.length, 1, 'only the valid request rotated');
    });

    it('answers 415 for a body that is not application/json', async () => {
      const c = await connector();
      const url = `${server.baseUrl}/integrations/v1/connectors/api-keys/${c.id}`;
      const key = testKey();
      for (const [type, body] of [
        ['text/plain', JSON.stringify({ api_key: key })],
        ['application/x-www-form-urlencoded', `api_key=${key}`],
        ['application/xml', `<api_key>${key}</api_key>`],
        [undefined, JSON.stringify({ api_key: key })],
      ] as const) {
        const res = await http(url, {
          method: 'PUT',
          headers: { ...tenant.auth, ...(type ? { 'content-type': type } : {}) },
          body,
        });
        assert.equal(res.status, 415, String(type));
        assert.equal(res.body.code, 'unsupported_media_type', String(type));
        assert.ok(!res.text.includes(key));
      }
      const ok = await http(url, {
        method: 'PUT',
        headers: { ...tenant.auth, 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ api_key: key }),
      });
      assert.equal(ok.status, 200);
    });

    it("answers the same 404 for a malformed id, an unknown connector and another company's connector", async () => {
      const theirs = await connector(other, '/theirs-404', testKey('theirs'));
      const bodies: unknown[] = [];
      for (const id of ['not-a-uuid', UNKNOWN, theirs.id]) {
        const put = await putKey(server, tenant.auth, id, { api_key: testKey() });
        const check = await checkConnector(server, tenant.auth, id);
        for (const res of [put, check]) {
          assert.equal(res.status, 404, id);
          const { instance: _instance, request_id: _requestId, ...rest } = res.body;
          bodies.push(rest);
        }
      }
      assert.ok(
        bodies.every((b) => JSON.stringify(b) === JSON.stringify(bodies[0])),
        JSON.stringify(bodies),
      );
      assert.equal((bodies[0] as { code: string }).code, 'connector_not_found');
      // The other company's connector is untouched.
      assert.equal((await server.ctx.connectors.get(other.companyId, theirs.id)).keyVersion, 1);
    });

    it('leaves 401/403 to the bearer hook: no token, a read-only token for PUT, a write-only token for GET', async () => {
      const c = await connector();
      const none = await putKey(server, {}, c.id, { api_key: testKey() });
      assert.equal(none.status, 401);
      assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);

      const reader = await createTestClient(server.ctx, ['connector:read'], tenant.companyId);
      const readToken = await fetchToken(server, reader);
      const forbidden = await putKey(server, { authorization: `Bearer ${readToken}` }, c.id, {
        api_key: testKey(),
      });
      assert.equal(forbidden.status, 403);
      assert.match(forbidden.headers.get('www-authenticate') ?? '', /insufficient_scope/);
      assert.equal((await listConnectors(server, { authorization: `Bearer ${readToken}` })).status, 200);

      const writer = await createTestClient(server.ctx, ['connector:write'], tenant.companyId);
      const writeToken = await fetchToken(server, writer);
      assert.equal((await listConnectors(server, { authorization: `Bearer ${writeToken}` })).status, 403);
      assert.equal(
        (await checkConnector(server, { authorization: `Bearer ${writeToken}` }, c.id)).status,
        403,
      );
      assert.equal(
        (await putKey(server, { authorization: `Bearer ${writeToken}` }, c.id, { api_key: testKey() }))
          .status,
        200,
      );
      assert.equal((await server.ctx.connectors.get(tenant.companyId, c.id)).keyVersion, 1);
    });

    it('serialises 20 concurrent rotations: versions +1…+20, and the stored key is the one every later call uses', async () => {
      const c = await connector(tenant, '/race', testKey('initial'));
      const keys = Array.from({ length: 20 }, (_, i) => testKey(`race${i}`));
      const results = await Promise.all(
        keys.map((api_key) => putKey(server, tenant.auth, c.id, { api_key })),
      );
      assert.ok(
        results.every((r) => r.status === 200),
        results.map((r) => r.status).join(','),
      );
      const versions = results.map((r) => r.body.key_version).sort((a, b) => a - b);
      assert.deepEqual(
        versions,
        Array.from({ length: 20 }, (_, i) => i + 2),
      );
      const winner = keys[results.findIndex((r) => r.body.key_version === 21)]!;
      assert.equal((await server.ctx.connectors.get(tenant.companyId, c.id)).keyVersion, 21);

      const before = recorder.calls.length;
      for (let i = 0; i < 2; i++)
        assert.equal((await checkConnector(server, tenant.auth, c.id)).body.key_version, 21);
      const used = recorder.calls.slice(before).map((call) => call.authorization);
      assert.deepEqual(used, [`Bearer ${winner}`, `Bearer ${winner}`]);
      const events = await server.ctx.audit.list({ type: 'connector.api_key_rotated', subject: c.id });
      assert.equal(events.length, 20);
    });

    it('reports a check as ok:false with status 0 and an error code on failures, never a 500', async () => {
      const closed = await startKeyRecorder();
      const closedUrl = closed.url;
      await closed.close();
      const unreachable = await createConnector(server, tenant.companyId, {
        name: 'down',
        url: closedUrl,
        apiKey: testKey(),
      });
      const hanging = await connector(tenant, '/hang', testKey());
      const failing = await connector(tenant, '/status/503', testKey());
      const unset = await connector(tenant, '/unset');

      const down = await checkConnector(server, tenant.auth, unreachable.id);
      assert.equal(down.status, 200);
      assert.equal(down.body.ok, false);
      assert.equal(down.body.status, 0);
      assert.equal(down.body.error, 'connector_unreachable');

      const slow = await checkConnector(server, tenant.auth, hanging.id);
      assert.deepEqual(
        [slow.status, slow.body.ok, slow.body.status, slow.body.error],
        [200, false, 0, 'connector_timeout'],
      );
      assert.ok(slow.body.latency_ms >= 250, `timed out after ${slow.body.latency_ms} ms`);

      const bad = await checkConnector(server, tenant.auth, failing.id);
      assert.deepEqual([bad.body.ok, bad.body.status, bad.body.error], [false, 503, undefined]);

      const noKey = await checkConnector(server, tenant.auth, unset.id);
      assert.deepEqual(
        [noKey.body.ok, noKey.body.status, noKey.body.error, noKey.body.key_version],
        [false, 0, 'connector_key_not_set', 0],
      );
      assert.equal(
        recorder.calls.filter((call) => call.path === '/unset').length,
        0,
        'no call without a key',
      );
    });

    it('detects a tampered or moved ciphertext: the check reports connector_key_unreadable, a new key repairs it', async () => {
      const db = server.ctx.store.db;
      const keyA = testKey('tamper-a');
      const a = await connector(tenant, '/tamper-a', keyA);
      const b = await connector(tenant, '/tamper-b', testKey('tamper-b'));
      const sealed = (
        await db
          .selectFrom('connectors')
          .select('api_key_sealed')
          .where('id', '=', a.id)
          .executeTakeFirstOrThrow()
      ).api_key_sealed!;
      // Flip one byte inside the sealed value.
      const at = sealed.length - 5;
      const flipped = sealed.slice(0, at) + (sealed[at] === 'A' ? 'B' : 'A') + sealed.slice(at + 1);
      await db.updateTable('connectors').set({ api_key_sealed: flipped }).where('id', '=', a.id).execute();
      // Move a's (intact) ciphertext onto b's row.
      await db.updateTable('connectors').set({ api_key_sealed: sealed }).where('id', '=', b.id).execute();

      const callsBefore = recorder.calls.length;
      for (const id of [a.id, b.id]) {
        const res = await checkConnector(server, tenant.auth, id);
        assert.equal(res.status, 200);
        assert.deepEqual(
          [res.body.ok, res.body.status, res.body.error],
          [false, 0, 'connector_key_unreadable'],
        );
      }
      assert.equal(recorder.calls.length, callsBefore, 'nothing was sent with an unverifiable key');
      assert.ok(server.logs.some((l) => l.includes('failed its integrity check')));
      assert.ok(!server.logs.some((l) => l.includes(keyA)));

      const repaired = testKey('repaired');
      assert.equal((await putKey(server, tenant.auth, a.id, { api_key: repaired })).status, 200);
      assert.equal((await checkConnector(server, tenant.auth, a.id)).body.ok, true);
      assert.equal(recorder.calls.at(-1)!.authorization, `Bearer ${repaired}`);
    });

    it('accepts a check POST with or without a JSON body', async () => {
      const c = await connector(tenant, '/bodies', testKey());
      const url = `${server.baseUrl}/integrations/v1/connectors/${c.id}/check`;
      for (const init of [
        { method: 'POST', headers: { ...tenant.auth, 'content-type': 'application/json' } },
        { method: 'POST', headers: { ...tenant.auth, 'content-type': 'application/json' }, body: '{}' },
      ]) {
        const res = await http(url, init);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.ok, true);
      }
    });

    it('documents the routes in the OpenAPI document, with api_key write-only', async () => {
      const doc = (await http(`${server.baseUrl}/docs/json`)).body;
      const put = doc.paths['/integrations/v1/connectors/api-keys/{connector_id}'].put;
      const schema = put.requestBody.content['application/json'].schema;
      assert.equal(schema.properties.api_key.writeOnly, true);
      assert.equal(schema.properties.api_key.maxLength, 4096);
      assert.equal(schema.additionalProperties, false);
      assert.deepEqual(put.security, [{ bearer: [] }]);
      assert.ok(doc.paths['/integrations/v1/connectors'].get.responses['200']);
      assert.ok(doc.paths['/integrations/v1/connectors/{connector_id}/check'].post.responses['200']);
    });
  });
}
