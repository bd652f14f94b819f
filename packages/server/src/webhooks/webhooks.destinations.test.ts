import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { createConnector, testKey } from '@parley/testing/integrations/connectors-fixtures';
import { freePort } from '@parley/testing/process';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  api,
  startWebhookSink,
  type WebhookSink,
  webhookTenant,
} from '@parley/testing/webhooks/webhook-sink';

const PUBLIC_URL = 'https://parley.example';

/** A tenant with a webhook on `url` for key rotations, and a way to make one happen. */
async function subscribed(server: TestServer, url: string) {
  const tenant = await webhookTenant(server);
  const created = await api(server, tenant.auth, 'POST', '', { url, events: ['connector.api_key_rotated'] });
  assert.equal(created.status, 201, created.text);
  const webhook = created.body as { id: string };
  const connector = await createConnector(server, tenant.companyId, {
    name: 'crm',
    url: 'http://127.0.0.1:9/',
  });
  return {
    webhook,
    rotate: () =>
      server.ctx.connectors.rotateKey(
        { companyId: tenant.companyId, connectorId: connector.id, apiKey: testKey('rot') },
        { actor: 'cli' },
      ),
    firstAttempt: () =>
      waitFor('the first attempt', async () => {
        const [delivery] = await server.ctx.webhooks.service.deliveries(tenant.companyId, webhook.id);
        return delivery !== undefined && delivery.attempts >= 1 && delivery;
      }),
  };
}

// docs/webhooks.md "Deliveries": endpoints follow the outbound destination policy, blocked by default when the
// public URL is https; a refused, an unreachable and a blocked destination are recorded alike.
for (const database of TEST_DATABASES) {
  describe(`webhook destinations behind an https public URL (${database})`, () => {
    let server: TestServer;
    let sink: WebhookSink;
    before(async () => {
      server = await startTestServer({
        database,
        config: { publicUrl: PUBLIC_URL, oauth: { audience: PUBLIC_URL } },
      });
      sink = await startWebhookSink();
    });
    after(async () => {
      await server.close();
      await sink.close();
    });

    it('refuses a loopback or metadata literal when it is saved, and never delivers to a name that resolves to one', async () => {
      const tenant = await webhookTenant(server);
      for (const url of [
        sink.url,
        'http://169.254.169.254/latest',
        'http://[::ffff:10.0.0.1]/',
        'http://0x7f.1/',
      ]) {
        const res = await api(server, tenant.auth, 'POST', '', { url, events: ['message.created'] });
        assert.deepEqual([res.status, res.body.code], [400, 'invalid_url'], url);
      }
      // A name is judged on every attempt, on each address it resolves to (here the loopback of /etc/hosts).
      const byName = await subscribed(server, sink.url.replace('127.0.0.1', 'localhost'));
      await byName.rotate();
      const delivery = await byName.firstAttempt();
      assert.deepEqual([delivery.status, delivery.last_status_code], ['pending', 0]);
      assert.equal(sink.received.length, 0, 'nothing reached the sink');
    });
  });

  describe(`webhook delivery outcomes do not tell a refused, a reset and a blocked destination apart (${database})`, () => {
    let server: TestServer;
    let sink: WebhookSink;
    let resetting: Server;
    before(async () => {
      // Blocking on, 127.0.0.1 allowed (so destinations can be reached at all here); 127.0.0.2 stands for any other.
      server = await startTestServer({
        database,
        config: {
          publicUrl: PUBLIC_URL,
          oauth: { audience: PUBLIC_URL },
          integrations: { outboundAllow: ['127.0.0.1'] },
        },
      });
      sink = await startWebhookSink();
      resetting = createServer((req) => req.socket.destroy());
      await new Promise<void>((resolve) => resetting.listen(0, '127.0.0.1', resolve));
    });
    after(async () => {
      await server.close();
      await sink.close();
      await new Promise<void>((resolve) => resetting.close(() => resolve()));
    });

    it('records the same status, attempts and code for each, while an open sink is delivered to', async () => {
      const closedPort = await freePort();
      const refused = await subscribed(server, `http://127.0.0.1:${closedPort}/hooks`);
      const reset = await subscribed(
        server,
        `http://127.0.0.1:${(resetting.address() as AddressInfo).port}/hooks`,
      );
      const blocked = await subscribed(server, `http://127.0.0.1:${closedPort}/blocked`);
      // Saved before the operator narrowed the policy: the dispatcher judges it again on every attempt.
      await server.ctx.store.db
        .updateTable('webhook_endpoints')
        .set({ url: `http://127.0.0.2:${closedPort}/blocked` })
        .where('id', '=', blocked.webhook.id)
        .execute();
      const open = await subscribed(server, sink.url);
      for (const endpoint of [refused, reset, blocked, open]) await endpoint.rotate();

      const outcome = async (endpoint: typeof refused) => {
        const { status, attempts, last_status_code } = await endpoint.firstAttempt();
        return { status, attempts, last_status_code };
      };
      const failed = { status: 'pending', attempts: 1, last_status_code: 0 };
      assert.deepEqual(await outcome(refused), failed, 'connection refused');
      assert.deepEqual(await outcome(reset), failed, 'connection reset');
      assert.deepEqual(await outcome(blocked), failed, 'destination blocked');
      assert.deepEqual(await outcome(open), { status: 'delivered', attempts: 1, last_status_code: 200 });
    });
  });
}
