import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { dropTestSchema, TEST_DATABASES, testPostgresUrl, uniqueSchema } from '@parley/testing/databases';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { openStore, type Store } from './database.ts';

for (const database of TEST_DATABASES) {
  describe(`group commit (${database})`, () => {
    let dir: string;
    let store: Store;
    let schema: string | undefined;
    const statements: string[] = [];
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'parley-group-commit-'));
      schema = database === 'postgres' ? uniqueSchema() : undefined;
      store = await openStore({
        dataDir: dir,
        ...(database === 'postgres' ? { databaseUrl: testPostgresUrl(), schema } : {}),
        onQuery: (query) => statements.push(query.sql),
      });
      await sql`create table probe_parent (id text primary key)`.execute(store.db);
      // Checked at COMMIT only: the way to make a shared commit itself fail.
      await sql`create table probe_child (parent_id text references probe_parent (id) deferrable initially deferred)`.execute(
        store.db,
      );
    });
    after(async () => {
      await store.close();
      if (schema) await dropTestSchema(schema);
      rmSync(dir, { recursive: true, force: true });
    });

    const insertParent = (id: string) =>
      store.writes.run(async (trx) => {
        await sql`insert into probe_parent (id) values (${id})`.execute(trx);
        return id;
      });
    const parents = async () =>
      (await sql<{ id: string }>`select id from probe_parent order by id`.execute(store.db)).rows.map(
        (r) => r.id,
      );

    it('writes started together each settle on their own: the failed one is undone, the others are stored', async () => {
      const started = [
        insertParent('a1'),
        insertParent('a1'), // a duplicate key: fails, alone
        store.writes.run(async (trx) => {
          await sql`insert into probe_parent (id) values ('a2')`.execute(trx);
          throw new Error('refused after writing');
        }),
        insertParent('a3'),
      ];
      const outcomes = await Promise.allSettled(started);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'rejected', 'rejected', 'fulfilled'],
      );
      assert.equal((outcomes[0] as PromiseFulfilledResult<string>).value, 'a1');
      assert.match(String((outcomes[2] as PromiseRejectedResult).reason), /refused after writing/);
      assert.deepEqual(await parents(), ['a1', 'a3'], 'a2 was rolled back with the write that failed');
    });

    it('a commit that fails rejects every write of its group and stores none of them', async () => {
      const outcomes = await Promise.allSettled([
        insertParent('b1'),
        store.writes.run((trx) => sql`insert into probe_child (parent_id) values ('nobody')`.execute(trx)),
      ]);
      const shared = database === 'sqlite';
      assert.deepEqual(
        outcomes.map((o) => o.status),
        shared ? ['rejected', 'rejected'] : ['fulfilled', 'rejected'],
        shared ? 'one commit for both' : 'PostgreSQL commits each write on its own',
      );
      assert.equal((await parents()).includes('b1'), !shared);
    });

    if (database === 'sqlite') {
      it('writes of one event-loop turn share one transaction, each in a savepoint; a lone write needs none', async () => {
        statements.length = 0;
        await Promise.all([insertParent('c1'), insertParent('c2'), insertParent('c3')]);
        assert.equal(statements.filter((s) => s.startsWith('savepoint')).length, 3);
        statements.length = 0;
        await insertParent('c4');
        assert.equal(statements.filter((s) => s.startsWith('savepoint')).length, 0);
      });

      it('settles only once the commit is durable: another connection already reads every write', async () => {
        const ids = ['d1', 'd2', 'd3', 'd4'];
        const results = await Promise.all(ids.map(insertParent));
        const other = new SQLite(join(dir, 'parley.db'), { readonly: true });
        try {
          const seen = other.prepare("select id from probe_parent where id like 'd%' order by id").all();
          assert.deepEqual(
            seen.map((r) => (r as { id: string }).id),
            results,
          );
        } finally {
          other.close();
        }
      });
    }
  });
}
