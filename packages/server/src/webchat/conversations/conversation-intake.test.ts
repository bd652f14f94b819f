import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TEST_DATABASES } from '@parley/testing/databases';
import { readOnlySqlite, type StoreOutage } from '@parley/testing/store-outage';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import {
  connectVisitor,
  createCompanyWithSlowEmployee,
  createConversation,
  newVisitor,
  sendMessage,
} from '@parley/testing/webchat/webchat-fixtures';
import { sql } from 'kysely';

/**
 * PostgreSQL refuses the message inserts of this server's schema as a full disk does (SQLSTATE 53100), while it
 * still answers reads: the store cannot take the message, and nothing else is wrong.
 */
function fullDiskPostgres(server: TestServer): StoreOutage {
  const db = server.ctx.store.db;
  return {
    cut: async () => {
      await sql`create or replace function parley_test_disk_full() returns trigger language plpgsql as
        $$ begin raise exception 'could not extend file' using errcode = '53100'; end $$`.execute(db);
      await sql`create trigger parley_test_disk_full before insert on messages
        for each row execute function parley_test_disk_full()`.execute(db);
    },
    restore: async () => {
      await sql`drop trigger if exists parley_test_disk_full on messages`.execute(db);
    },
  };
}

// A visitor message refused because the store cannot take it (a full pool in a burst, a lost connection, a full
// disk) is answered 503 at once: no look-up of a stored copy, which would only wait for the store again
// (packages/server/src/webchat/conversations/conversation-intake.ts).
for (const database of TEST_DATABASES) {
  describe(`a visitor message the store cannot take (${database})`, () => {
    let server: TestServer;
    let outage: StoreOutage;
    let lookups = 0;
    before(async () => {
      server = await startTestServer({ database });
      outage = database === 'sqlite' ? readOnlySqlite(server.ctx.store.db) : fullDiskPostgres(server);
      const store = server.ctx.webchat.store;
      const lookUp = store.findByClientMessageId.bind(store);
      store.findByClientMessageId = (conversationId, clientMessageId) => {
        lookups++;
        return lookUp(conversationId, clientMessageId);
      };
    });
    after(async () => {
      await outage?.restore();
      await server?.close();
    });

    it('is refused as temporary without a look-up; its retry is stored once, and a retry after that is a duplicate', async () => {
      const { company } = await createCompanyWithSlowEmployee(server, 'Intake Co', { words: 2, delayMs: 1 });
      const v = newVisitor(company.id);
      const c = await connectVisitor(server, v, await createConversation(server, v));
      try {
        const id = randomUUID();
        await outage.cut();
        const refused = await sendMessage(c.sub, 'hello', id).then(
          () => undefined,
          (error: { code?: number; temporary?: boolean }) => error,
        );
        await outage.restore();
        assert.deepEqual([refused?.code, refused?.temporary], [503, true], 'a temporary refusal');
        assert.equal(lookups, 0, 'no look-up for a stored copy while the store cannot take the message');
        await sendMessage(c.sub, 'hello', id);
        await sendMessage(c.sub, 'hello', id);
        assert.equal(lookups, 1, 'the duplicate is found by the unique index, then looked up');
        const stored = await server.ctx.store.db
          .selectFrom('messages')
          .select('id')
          .where('client_message_id', '=', id)
          .execute();
        assert.equal(stored.length, 1, 'stored once');
      } finally {
        c.close();
      }
    });
  });
}
