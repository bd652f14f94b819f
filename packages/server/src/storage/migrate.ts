import { type Migration, type MigrationProvider, Migrator, sql } from 'kysely';
import type { Store } from './database.ts';
import { migrations } from './migrations/index.ts';

class StaticProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

/** Applies every pending migration (called at start by the server and the CLI); PostgreSQL runs it under a lock. */
export async function migrateToLatest(store: Store): Promise<string[]> {
  // Kysely looks for its migration tables in every schema unless told which one: with several schemas in one
  // database (tests, or deployments sharing a database) it would skip creating them in ours. Name ours.
  const migrationTableSchema =
    store.dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(store.db)).rows[0]?.schema
      : undefined;
  const migrator = new Migrator({ db: store.db, provider: new StaticProvider(), migrationTableSchema });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
