import { randomBytes } from 'node:crypto';
import pg from 'pg';

export type TestDatabase = 'sqlite' | 'postgres';

/** Both databases, always: the PostgreSQL suites run in CI and on every development machine (no silent skip). */
export const TEST_DATABASES: TestDatabase[] = ['sqlite', 'postgres'];

export function testPostgresUrl(): string {
  const url = process.env.PARLEY_TEST_DATABASE_URL;
  if (!url)
    throw new Error('PARLEY_TEST_DATABASE_URL is not set: run the tests with `npm test` (scripts/test.mjs)');
  return url;
}

export function testRedisUrl(): string {
  const url = process.env.PARLEY_TEST_REDIS_URL;
  if (!url)
    throw new Error('PARLEY_TEST_REDIS_URL is not set: run the tests with `npm test` (scripts/test.mjs)');
  return url;
}

/** A PostgreSQL schema name unique to one test server, so parallel test files never see each other's rows. */
export const uniqueSchema = (): string => `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;

/**
 * Drops a schema made with `uniqueSchema` and all it holds, once its test server (or bench run) is done; `url` names
 * the database, the tests' by default.
 */
export async function dropTestSchema(schema: string, url = testPostgresUrl()): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}
