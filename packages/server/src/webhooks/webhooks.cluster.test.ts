import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createConnector, testKey } from '@parley/testing/integrations/connectors-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { waitFor } from '@parley/testing/wait';
import {
  api,
  startWebhookSink,
  verifyDelivery,
  type WebhookSink,
  webhookTenant,
} from '@parley/testing/webhooks/webhook-sink';

const EVENTS = 300;

// "In a cluster one node sends each" (docs/webhooks.md "Events"): two app instances on one PostgreSQL database
// both run their dispatchers; every event arrives exactly once.
describe('webhook deliveries with two app instances on one PostgreSQL', () => {
  let first: TestServer;
  let second: TestServer;
  let sink: WebhookSink;
  before(async () => {
    first = await startTestServer({ database: 'postgres' });
    second = await startTestServer({ database: 'postgres', shareWith: first });
    sink = await startWebhookSink();
  });
  after(async () => {
    await second.close();
    await first.close();
    await sink.close();
  });

  it('delivers every event once, whichever node stored it', async () => {
    const tenant = await webhookTenant(first);
    const created = await api(first, tenant.auth, 'POST', '', {
      url: sink.url,
      events: ['connector.api_key_rotated'],
    });
    const connector = await createConnector(first, tenant.companyId, {
      name: 'crm',
      url: 'http://127.0.0.1:9/',
    });
    // Events stored on both nodes, a few at a time (each pool has 10 connections), while both dispatchers claim.
    for (let i = 0; i < EVENTS; i += 6) {
      await Promise.all(
        Array.from({ length: 6 }, (_, j) =>
          (j % 2 ? second : first).ctx.connectors.rotateKey(
            { companyId: tenant.companyId, connectorId: connector.id, apiKey: testKey(String(i + j)) },
            { actor: 'cli' },
          ),
        ),
      );
    }
    await waitFor('every delivery', () => sink.received.length >= EVENTS, 30_000);
    // Both nodes stop claiming and finish what they were sending: anything sent twice has arrived by then.
    await Promise.all([first.ctx.webhooks.drain(15_000), second.ctx.webhooks.drain(15_000)]);
    const ids = sink.received.map((r) => String(r.headers['webhook-id']));
    assert.equal(sink.received.length, EVENTS);
    assert.equal(new Set(ids).size, EVENTS, 'no event twice');
    const versions = sink.events().map((e) => e.data.key_version as number);
    assert.deepEqual(
      versions.sort((a, b) => a - b),
      Array.from({ length: EVENTS }, (_, i) => i + 1),
    );
    for (const received of sink.received.slice(0, 10)) verifyDelivery(created.body.secret, received);
    const owners = await first.ctx.store.db
      .selectFrom('webhook_deliveries')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .where('status', '=', 'delivered')
      .executeTakeFirstOrThrow();
    assert.equal(Number(owners.n), EVENTS);
  });
});
