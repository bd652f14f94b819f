import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { http } from '@parley/testing/http-client';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import {
  api,
  startWebhookSink,
  type WebhookSink,
  webhookTenant,
} from '@parley/testing/webhooks/webhook-sink';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

// The /platform/v1/webhooks routes of docs/webhooks.md "Endpoints": shapes, status codes and every documented error.
for (const database of TEST_DATABASES) {
  describe(`webhooks API (${database})`, () => {
    let server: TestServer;
    let sink: WebhookSink;
    let tenant: Awaited<ReturnType<typeof webhookTenant>>;
    let other: Awaited<ReturnType<typeof webhookTenant>>;
    before(async () => {
      server = await startTestServer({ database });
      sink = await startWebhookSink();
      tenant = await webhookTenant(server);
      other = await webhookTenant(server);
    });
    after(async () => {
      await server.close();
      await sink.close();
    });

    it('creates a webhook and shows its secret once; lists without secrets; deletes', async () => {
      const created = await api(server, tenant.auth, 'POST', '', {
        url: sink.url,
        events: ['message.created', 'conversation.closed'],
        description: 'CRM sync',
      });
      assert.equal(created.status, 201, created.text);
      assert.deepEqual(Object.keys(created.body).sort(), ['description', 'events', 'id', 'secret', 'url']);
      assert.match(created.body.secret, /^whsec_[A-Za-z0-9+/]+={0,2}$/);
      assert.ok(Buffer.from(created.body.secret.slice(6), 'base64').length >= 24);
      assert.equal(created.body.url, sink.url);
      assert.deepEqual(created.body.events, ['message.created', 'conversation.closed']);

      const listed = await api(server, tenant.auth, 'GET', '');
      assert.equal(listed.status, 200);
      assert.equal(listed.body.webhooks.length, 1);
      assert.equal(listed.body.webhooks[0].id, created.body.id);
      assert.equal(listed.body.webhooks[0].enabled, true);
      assert.ok(!listed.text.includes(created.body.secret.slice(6)), 'the secret is never listed');
      assert.ok(!('secret' in listed.body.webhooks[0]));
      const stored = await server.ctx.store.db
        .selectFrom('webhook_endpoints')
        .select('secret_sealed')
        .executeTakeFirstOrThrow();
      assert.ok(!stored.secret_sealed.includes(created.body.secret.slice(6)), 'the secret is stored sealed');

      assert.equal((await api(server, other.auth, 'GET', '')).body.webhooks.length, 0, 'per company');
      assert.equal((await api(server, other.auth, 'DELETE', `/${created.body.id}`)).status, 404);
      const deliveries = await api(server, tenant.auth, 'GET', `/${created.body.id}/deliveries`);
      assert.deepEqual(deliveries.body, { deliveries: [] });

      const deleted = await api(server, tenant.auth, 'DELETE', `/${created.body.id}`);
      assert.equal(deleted.status, 204);
      assert.equal((await api(server, tenant.auth, 'GET', '')).body.webhooks.length, 0);
      const audit = await server.ctx.audit.list({ companyId: tenant.companyId, subject: created.body.id });
      assert.deepEqual(audit.map((e) => e.type).sort(), ['webhook.created', 'webhook.deleted']);
    });

    it('rotates the secret: a new one, answered once, audited', async () => {
      const created = await api(server, tenant.auth, 'POST', '', {
        url: sink.url,
        events: ['message.created'],
      });
      const rotated = await api(server, tenant.auth, 'POST', `/${created.body.id}/secret`);
      assert.equal(rotated.status, 200, rotated.text);
      assert.match(rotated.body.secret, /^whsec_/);
      assert.notEqual(rotated.body.secret, created.body.secret);
      assert.equal(rotated.headers.get('cache-control'), 'no-store');
      const withJsonType = await http(`${server.baseUrl}/platform/v1/webhooks/${created.body.id}/secret`, {
        method: 'POST',
        headers: { ...tenant.auth, 'content-type': 'application/json' },
      });
      assert.equal(withJsonType.status, 200, 'an empty JSON body is fine');
      const audit = await server.ctx.audit.list({ type: 'webhook.secret_rotated', subject: created.body.id });
      assert.equal(audit.length, 2);
      assert.ok(!JSON.stringify(audit).includes('whsec_'));
    });

    it('refuses bad input with documented codes', async () => {
      const cases: Array<[unknown, number, string]> = [
        [{ url: 'ftp://example.com/x', events: ['message.created'] }, 400, 'invalid_url'],
        [{ url: 'https://user:pw@example.com/', events: ['message.created'] }, 400, 'invalid_url'],
        [{ url: 'not a url', events: ['message.created'] }, 400, 'invalid_url'],
        [{ url: sink.url, events: [] }, 400, 'invalid_events'],
        [{ url: sink.url, events: ['message.deleted'] }, 400, 'invalid_events'],
        [{ url: sink.url, events: ['message.created'], description: 'a\u0007b' }, 400, 'invalid_description'],
        [
          { url: sink.url, events: ['message.created'], description: 'x'.repeat(501) },
          400,
          'validation_failed',
        ],
        [{ events: ['message.created'] }, 400, 'validation_failed'],
        [{ url: sink.url, events: ['message.created'], secret: 'mine' }, 400, 'validation_failed'],
      ];
      for (const [body, status, code] of cases) {
        const res = await api(server, tenant.auth, 'POST', '', body);
        assert.equal(res.status, status, `${JSON.stringify(body)}: ${res.text}`);
        assert.equal(res.body.code, code, JSON.stringify(body));
        assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
      }
      const notJson = await http(`${server.baseUrl}/platform/v1/webhooks`, {
        method: 'POST',
        headers: { ...tenant.auth, 'content-type': 'text/plain' },
        body: 'url=x',
      });
      assert.equal(notJson.status, 415);
      assert.equal(notJson.body.code, 'unsupported_media_type');
    });

    it('answers 404 for unknown, malformed and foreign ids on every route', async () => {
      const theirs = await api(server, other.auth, 'POST', '', {
        url: sink.url,
        events: ['message.created'],
      });
      for (const id of [UNKNOWN, 'nope', theirs.body.id]) {
        for (const [method, path] of [
          ['DELETE', `/${id}`],
          ['POST', `/${id}/secret`],
          ['GET', `/${id}/deliveries`],
          ['POST', `/${id}/deliveries/dlv_x/retry`],
        ] as const) {
          const res = await api(server, tenant.auth, method, path);
          assert.equal(res.status, 404, `${method} ${path}`);
          assert.equal(res.body.code, 'webhook_not_found', `${method} ${path}`);
        }
      }
      const mine = await api(server, tenant.auth, 'POST', '', { url: sink.url, events: ['message.created'] });
      const retry = await api(server, tenant.auth, 'POST', `/${mine.body.id}/deliveries/dlv_unknown/retry`);
      assert.equal(retry.status, 404);
      assert.equal(retry.body.code, 'webhook_delivery_not_found');
    });

    it('requires a token with the right scope', async () => {
      assert.equal((await api(server, {}, 'GET', '')).status, 401);
      const reader = await webhookTenant(server, ['webhooks:read']);
      const write = await api(server, reader.auth, 'POST', '', {
        url: sink.url,
        events: ['message.created'],
      });
      assert.equal(write.status, 403);
      assert.equal(write.body.code, 'insufficient_scope');
      assert.equal(write.body.required_scope, 'webhooks:write');
      const writer = await webhookTenant(server, ['webhooks:write']);
      assert.equal((await api(server, writer.auth, 'GET', '')).status, 403);
      const connectorsOnly = await webhookTenant(server, ['connector:read']);
      assert.equal((await api(server, connectorsOnly.auth, 'GET', '')).status, 403);
    });
  });
}

describe('webhooks API with PARLEY_OUTBOUND_BLOCK_PRIVATE', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ config: { integrations: { outboundBlockPrivate: true } } });
  });
  after(() => server.close());

  it('refuses a blocked IP literal at creation', async () => {
    const tenant = await webhookTenant(server);
    for (const url of ['http://127.0.0.1:9/x', 'http://[::1]/x', 'http://169.254.169.254/latest']) {
      const res = await api(server, tenant.auth, 'POST', '', { url, events: ['message.created'] });
      assert.equal(res.status, 400, url);
      assert.equal(res.body.code, 'invalid_url', url);
    }
  });
});
