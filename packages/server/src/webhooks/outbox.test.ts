import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { openMigratedStore } from '@parley/testing/migrated-store';
import { insertEndpointRow } from '@parley/testing/webhooks/endpoint-rows';
import { CompaniesService } from '../companies/companies.service.ts';
import { CompanyCache } from '../companies/company-cache.ts';
import type { Store } from '../storage/database.ts';
import { WebhookOutbox } from './outbox.ts';

/**
 * The outbox asks for a company's enabled endpoints with every conversation created and every message: with the
 * node's company cache it reads them from the store once, and again only after a change was announced.
 */
for (const database of TEST_DATABASES) {
  describe(`webhook outbox with the company cache (${database})`, () => {
    let store: Store;
    let close: () => Promise<void>;
    const statements: string[] = [];
    before(async () => {
      ({ store, close } = await openMigratedStore(database, (query) => statements.push(query.sql)));
    });
    after(() => close());

    const endpointReads = () => statements.filter((s) => /from "webhook_endpoints"/.test(s)).length;
    const addEndpoint = (companyId: string) => insertEndpointRow(store.db, companyId);
    const deliveries = async (companyId: string) =>
      (
        await store.db
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('company_id', '=', companyId)
          .execute()
      ).length;

    /** A new company, a node's cache and outbox, and a `conversation.created` event recorded through them. */
    const companyWithOutbox = async (name: string) => {
      const cache = new CompanyCache({ capacity: 10, ttlMs: 60_000, mode: 'single' });
      const outbox = new WebhookOutbox(store.dialect, cache);
      const company = await new CompaniesService(store.db).create(name);
      const created = () =>
        store.writes.run((trx) =>
          outbox.record(trx, {
            type: 'conversation.created',
            companyId: company.id,
            data: { conversation_id: randomUUID(), channel_id: null, digital_employee_id: randomUUID() },
          }),
        );
      return { cache, company, created };
    };

    it('reads the endpoints once per company until a change is announced, and then sees the change', async () => {
      const { cache, company, created } = await companyWithOutbox('Outbox Co');
      const before = endpointReads();
      await created();
      await created();
      await created();
      assert.equal(endpointReads() - before, 1, 'one read of the endpoints for three events');
      assert.equal(await deliveries(company.id), 0);

      await addEndpoint(company.id);
      await cache.invalidate(company.id);
      await created();
      assert.equal(await deliveries(company.id), 1, 'the endpoint added is in the next event');
      await created();
      assert.equal(endpointReads() - before, 2, 'read again once after the change, then from memory');
      assert.equal(await deliveries(company.id), 2);
    });

    it('an endpoint deleted or disabled while a node still holds it gets no delivery, and the change is stored', async () => {
      const { company, created } = await companyWithOutbox('Stale Co');
      await addEndpoint(company.id);
      await addEndpoint(company.id);
      await created();
      assert.equal(await deliveries(company.id), 2, 'one delivery per endpoint');
      const [gone, off] = await store.db
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('company_id', '=', company.id)
        .orderBy('id')
        .execute();
      // Changed behind the cache's back: what another node's cache holds until it hears the change.
      await store.db.deleteFrom('webhook_endpoints').where('id', '=', gone!.id).execute();
      await store.db.updateTable('webhook_endpoints').set({ enabled: 0 }).where('id', '=', off!.id).execute();
      await created();
      assert.equal(
        await deliveries(company.id),
        1,
        'the disabled endpoint keeps its first delivery, no new one',
      );
    });
  });
}
