import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FinishedQuery, openStore, type Store } from '@parley/server/internal/storage/database';
import { migrateToLatest } from '@parley/server/internal/storage/migrate';
import { dropTestSchema, type TestDatabase, testPostgresUrl, uniqueSchema } from './databases.ts';

/**
 * A store of the given kind with every migration applied and no server around it — its own data folder, and on
 * PostgreSQL its own schema — for tests of one service and the statements it runs (`onQuery` sees each of them).
 */
export async function openMigratedStore(
  database: TestDatabase,
  onQuery?: (query: FinishedQuery) => void,
): Promise<{ store: Store; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'parley-store-'));
  const schema = database === 'postgres' ? uniqueSchema() : undefined;
  const store = await openStore({
    dataDir: dir,
    ...(schema ? { databaseUrl: testPostgresUrl(), schema } : {}),
    ...(onQuery ? { onQuery } : {}),
  });
  await migrateToLatest(store);
  return {
    store,
    close: async () => {
      await store.close();
      if (schema) await dropTestSchema(schema);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
