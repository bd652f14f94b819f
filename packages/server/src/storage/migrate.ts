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
  // Each capability numbers its migrations in a range of its own (migrations/index.ts), so a release can bring a
  // migration that sorts before one an existing database already ran (022 after 030, say). They touch only their
  // own tables and columns, so pending ones are applied in name order whatever ran before.
  const migrator = new Migrator({
    db: store.db,
    provider: new StaticProvider(),
    migrationTableSchema,
    allowUnorderedMigrations: true,
  });
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    if (!error) return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    // Kysely's schema check reads privileges of every schema in the database and its table check introspects every
    // table and column; one dropped or altered at that instant by another tenant of the database (e.g. a parallel
    // test run) fails them with 3F000 "schema does not exist", 42P01 "relation does not exist" or 42703 "column does
    // not exist" naming the other schema's table. That is transient and unrelated to ours, so try again (a real
    // missing table of ours fails all five attempts).
    if (!isCatalogRace(error) || attempt >= 5) throw error;
    await new Promise((r) => setTimeout(r, 50 * attempt));
  }
}

const CATALOG_RACES = new Set(['3F000', '42P01', '42703']);

/** An error of introspecting the database while another schema's tables were dropped or altered (see above). */
export const isCatalogRace = (error: unknown): boolean =>
  typeof error === 'object' &&
  error !== null &&
  CATALOG_RACES.has(String((error as { code?: unknown }).code));
