// Taking the store away from one test server, for real, while the shared PostgreSQL stays up for every other test:
// PostgreSQL is reached through a TCP proxy that the test cuts (every connection reset, new ones refused: what a
// stopped database looks like from the node); SQLite is switched to `PRAGMA query_only`, so every write fails with
// SQLITE_READONLY as on a file system remounted read-only. Either way the store answers again after `restore`.

import type { Database } from '@parley/server/internal/storage/schema';
import { type Kysely, sql } from 'kysely';
import { type TestDatabase, testPostgresUrl } from './databases.ts';
import { TcpProxy } from './tcp-proxy.ts';

export interface StoreOutage {
  /** From now on the store fails every write (PostgreSQL: every statement). */
  cut(): Promise<void>;
  /** The store answers again. */
  restore(): Promise<void>;
}

/** The tests' PostgreSQL behind a proxy: its URL for the server (or store) to cut off, and the outage. */
export async function proxiedPostgres(): Promise<{
  url: string;
  outage: StoreOutage & { close(): Promise<void> };
}> {
  const direct = new URL(testPostgresUrl());
  const proxy = await TcpProxy.start({ host: direct.hostname, port: Number(direct.port || 5432) });
  const url = new URL(direct);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.listeningPort);
  return {
    url: url.toString(),
    outage: { cut: () => proxy.cut(), restore: () => proxy.restore(), close: () => proxy.close() },
  };
}

/** A SQLite store whose writes fail while cut (its one connection in `query_only` mode). */
export function readOnlySqlite(db: Kysely<Database>): StoreOutage {
  return {
    cut: async () => {
      await sql`pragma query_only = 1`.execute(db);
    },
    restore: async () => {
      await sql`pragma query_only = 0`.execute(db);
    },
  };
}

/** For `startTestServer`'s config: PostgreSQL through a proxy the test can cut; SQLite as it is. */
export async function outageReadyDatabase(database: TestDatabase): Promise<{
  config: { databaseUrl?: string };
  outageOf(db: Kysely<Database>): StoreOutage;
  close(): Promise<void>;
}> {
  if (database === 'sqlite')
    return { config: {}, outageOf: (db) => readOnlySqlite(db), close: async () => {} };
  const { url, outage } = await proxiedPostgres();
  return { config: { databaseUrl: url }, outageOf: () => outage, close: () => outage.close() };
}
