import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { dropTestSchema, TEST_DATABASES, testPostgresUrl, uniqueSchema } from '@parley/testing/databases';
import { Migrator, sql } from 'kysely';
import { openStore } from './database.ts';
import { isCatalogRace, migrateToLatest } from './migrate.ts';
import { migrations } from './migrations/index.ts';

for (const database of TEST_DATABASES) {
  describe(`migrations (${database})`, () => {
    it('upgrade a database that already ran later-numbered migrations of other capabilities', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'parley-migrate-'));
      const schema = database === 'postgres' ? uniqueSchema() : undefined;
      const store = await openStore({
        dataDir,
        ...(schema ? { databaseUrl: testPostgresUrl(), schema } : {}),
      });
      try {
        // A release before the visitor-identity migrations: 030 and 040 ran, 022 and 023 did not exist.
        const before = Object.fromEntries(
          Object.entries(migrations).filter(([name]) => !/^02[23]_/.test(name)),
        );
        const migrator = new Migrator({
          db: store.db,
          provider: { getMigrations: async () => before },
          ...(schema ? { migrationTableSchema: schema } : {}),
        });
        const first = await migrator.migrateToLatest();
        assert.equal(first.error, undefined);
        assert.ok(first.results?.some((r) => r.migrationName === '040_portal_users'));

        assert.deepEqual(await migrateToLatest(store), ['022_visitor_identity', '023_read_feedback']);
        assert.deepEqual(await migrateToLatest(store), [], 'nothing left to apply');
        const row = await store.db
          .selectFrom('conversations')
          .select(['visitor_key', 'visitor_read_position'])
          .limit(1)
          .execute();
        assert.deepEqual(row, [], 'the new columns exist');
      } finally {
        await store.close();
        rmSync(dataDir, { recursive: true, force: true });
        if (schema) await dropTestSchema(schema);
      }
    });
  });
}

describe('migrations (postgres): another schema changing while ours is introspected', () => {
  it('are tried again on what PostgreSQL says of a schema, table or column that vanished, not on other errors', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-migrate-'));
    const schema = uniqueSchema();
    const store = await openStore({ dataDir, databaseUrl: testPostgresUrl(), schema });
    const failureOf = (query: Parameters<typeof sql.raw>[0]) =>
      sql
        .raw(query)
        .execute(store.db)
        .then(
          () => assert.fail(`${query} should fail`),
          (error: unknown) => error,
        );
    try {
      await sql.raw('create table other_tenant (id int)').execute(store.db);
      // What Kysely's introspection meets when another test file drops or alters its schema at that instant.
      assert.equal(isCatalogRace(await failureOf('create table no_such_schema.t (id int)')), true, 'schema');
      assert.equal(isCatalogRace(await failureOf('select * from no_such_table')), true, 'table');
      assert.equal(isCatalogRace(await failureOf('select company_id from other_tenant')), true, 'column');
      // A mistake of ours is not retried.
      assert.equal(isCatalogRace(await failureOf('select from where')), false, 'syntax error');
      assert.equal(
        isCatalogRace(await failureOf('insert into other_tenant values (1 / 0)')),
        false,
        'division',
      );
      assert.equal(isCatalogRace(new Error('no code')), false);
    } finally {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
      await dropTestSchema(schema);
    }
  });
});
