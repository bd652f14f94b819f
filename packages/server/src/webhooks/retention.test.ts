import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { DELIVERY_LOG_RETENTION_MS, pruneFinishedDeliveries } from './retention.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

for (const database of TEST_DATABASES) {
  describe(`webhook delivery log retention (${database})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ database });
      // Rows written directly: the dispatcher is stopped so it neither sends these nor prunes on its own.
      await server.ctx.webhooks.drain(0);
    });
    after(() => server.close());

    it('deletes finished deliveries older than 30 days and their events, keeps pending and recent ones', async () => {
      const db = server.ctx.store.db;
      const company = await server.ctx.companies.create('Retention Co');
      const { webhook } = await server.ctx.webhooks.service.create(
        company.id,
        { url: 'http://127.0.0.1:9/hook', events: ['conversation.created'] },
        { actor: 'user:test', ip: '127.0.0.1' },
      );
      const now = Date.now();
      const old = now - DELIVERY_LOG_RETENTION_MS - DAY_MS;
      const rows = [
        { id: 'old-delivered', status: 'delivered', created: old },
        { id: 'old-failed', status: 'failed', created: old },
        { id: 'old-pending', status: 'pending', created: old },
        { id: 'new-delivered', status: 'delivered', created: now - DAY_MS },
      ];
      for (const row of rows) {
        await db
          .insertInto('webhook_events')
          .values({
            id: `msg_${row.id}`,
            company_id: company.id,
            type: 'conversation.created',
            body: '{}',
            created_ms: row.created,
          })
          .execute();
        await db
          .insertInto('webhook_deliveries')
          .values({
            id: row.id,
            endpoint_id: webhook.id,
            event_id: `msg_${row.id}`,
            company_id: company.id,
            type: 'conversation.created',
            status: row.status,
            attempts: 1,
            last_status_code: 200,
            next_attempt_at: null,
            lease_owner: null,
            window_start_ms: row.created,
            created_ms: row.created,
          })
          .execute();
      }
      assert.equal(await pruneFinishedDeliveries(db, now - DELIVERY_LOG_RETENTION_MS), 2);
      const left = await db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('endpoint_id', '=', webhook.id)
        .execute();
      assert.deepEqual(left.map((r) => r.id).sort(), ['new-delivered', 'old-pending']);
      const events = await db
        .selectFrom('webhook_events')
        .select('id')
        .where('company_id', '=', company.id)
        .execute();
      assert.deepEqual(events.map((r) => r.id).sort(), ['msg_new-delivered', 'msg_old-pending']);
    });
  });
}
