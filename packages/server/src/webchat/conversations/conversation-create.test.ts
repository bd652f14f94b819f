import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { openMigratedStore } from '@parley/testing/migrated-store';
import { insertEndpointRow } from '@parley/testing/webhooks/endpoint-rows';
import { CompaniesService } from '../../companies/companies.service.ts';
import { CompanyCache } from '../../companies/company-cache.ts';
import type { Store } from '../../storage/database.ts';
import { WebhookOutbox } from '../../webhooks/outbox.ts';
import { ConversationsService } from './conversations.service.ts';

/**
 * The statements of a conversation's creation (docs/operations.md "Capacity"): the insert alone while its company
 * has no webhook endpoint subscribed and the visitor brings no attributes; with either, one transaction that also
 * stores the event or the attribute rows.
 */
for (const database of TEST_DATABASES) {
  describe(`conversation creation's statements (${database})`, () => {
    let store: Store;
    let close: () => Promise<void>;
    let statements: string[] = [];
    before(async () => {
      ({ store, close } = await openMigratedStore(database, (query) =>
        statements.push(query.sql.trim().toLowerCase()),
      ));
    });
    after(() => close());

    it('the insert alone without endpoints or attributes; the event and the attributes in its transaction', async () => {
      const cache = new CompanyCache({ capacity: 10, ttlMs: 60_000, mode: 'single' });
      const conversations = new ConversationsService(
        store.db,
        new WebhookOutbox(store.dialect, cache),
        store.writes,
      );
      const company = await new CompaniesService(store.db).create('Statements Co');
      const create = (attributes?: Record<string, string>) =>
        conversations.create(
          { companyId: company.id, sessionId: randomUUID() },
          randomUUID(),
          undefined,
          attributes ? { attributes } : {},
        );
      await create(); // the company's endpoints are now known to the node's cache

      statements = [];
      await create();
      const writes = statements.filter((s) => s !== 'begin' && s !== 'commit');
      assert.equal(writes.length, 1, `only the insert: ${writes.join('; ')}`);
      assert.match(writes[0]!, /^insert into "conversations"/);
      // PostgreSQL: no transaction of its own (one round trip); SQLite: the turn's shared commit, alone here.
      assert.deepEqual(statements.length, database === 'postgres' ? 1 : 3);

      statements = [];
      const withAttributes = await create({ plan: 'pro' });
      assert.ok(statements.includes('begin'), 'attribute rows are written with the insert');
      const attributeRows = await store.db
        .selectFrom('conversation_attributes')
        .select('key')
        .where('conversation_id', '=', withAttributes.id)
        .execute();
      assert.deepEqual(
        attributeRows.map((r) => r.key),
        ['plan'],
      );

      await insertEndpointRow(store.db, company.id);
      await cache.invalidate(company.id);
      const reported = await create();
      const events = await store.db
        .selectFrom('webhook_events')
        .select('type')
        .where('conversation_id', '=', reported.id)
        .execute();
      assert.deepEqual(
        events.map((e) => e.type),
        ['conversation.created'],
        'with an endpoint, the event is stored with the conversation',
      );
    });
  });
}
