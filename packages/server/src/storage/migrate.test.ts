import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { dropTestSchema, TEST_DATABASES, testPostgresUrl, uniqueSchema } from '@parley/testing/databases';
import { Migrator } from 'kysely';
import { openStore } from './database.ts';
import { migrateToLatest } from './migrate.ts';
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
