import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  type KyselyConfig,
  type LogEvent,
  PostgresDialect,
  type SqliteDatabase,
  SqliteDialect,
} from 'kysely';
import type pg from 'pg';
import type { Dialect } from './dialect.ts';
import { GroupCommit } from './group-commit.ts';
import type { Database } from './schema.ts';

export type { Dialect } from './dialect.ts';

export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  /** Human-readable location without credentials, for logs. */
  describe: string;
  /**
   * Runs a read-only statement compiled once by Kysely for this store's dialect, without Kysely's per-call
   * executor: for lookups on the hottest paths (the token endpoint's client lookup). Everything else uses `db`.
   */
  read<Row>(sql: string, parameters: readonly unknown[]): Promise<Row[]>;
  /** Small write transactions on the hot paths, sharing commits on SQLite (group-commit.ts). */
  writes: GroupCommit;
  /**
   * SQLite only: a number that moves whenever another process (a CLI command) committed to the file since the last
   * call (https://sqlite.org/pragma.html#pragma_data_version); this process's own commits leave it. Lets a cache of
   * rows (companies/company-cache.ts) drop what such a commit may have changed before it is used again.
   */
  othersCommits?: () => number;
  /** Resolves when the store answers a trivial query within `timeoutMs`, rejects otherwise (readiness). */
  ping(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export interface StoreOptions {
  databaseUrl?: string;
  dataDir: string;
  /** PostgreSQL only: schema to use (created if missing); tests isolate themselves this way. */
  schema?: string;
  /** SQLite only: file name inside dataDir (default parley.db), or ':memory:'. */
  sqliteFile?: string;
  /** PostgreSQL only: longest wait for a pooled connection (or a new one), in ms. Default 2000. */
  connectTimeoutMs?: number;
  /** PostgreSQL only: connections in the pool (config `storePoolSize`). Default 20. */
  poolSize?: number;
  /** PostgreSQL only: longest wait for one statement's answer, in ms. Default 10000. */
  queryTimeoutMs?: number;
  /** PostgreSQL only: told about connection errors that happen while no query is running (logged, never fatal). */
  onIdleError?: (error: Error) => void;
  /** Told about each statement when it ended: its SQL (no values), duration and whether it failed. */
  onQuery?: (query: FinishedQuery) => void;
}

/** Epoch milliseconds with sub-millisecond precision (most statements take less than one). */
const epochMs = (): number => performance.timeOrigin + performance.now();

/** One statement as the store's query hook sees it (metrics and trace spans). */
export interface FinishedQuery {
  /** The parameterised SQL, without values. */
  sql: string;
  /** When it started and ended, in epoch milliseconds. */
  startedAt: number;
  endedAt: number;
  failed: boolean;
}

let postgresDriver: Promise<typeof pg> | undefined;
/** The PostgreSQL driver, loaded when a PostgreSQL store is opened: a SQLite process never loads it. */
function loadPostgresDriver(): Promise<typeof pg> {
  postgresDriver ??= import('pg').then(({ default: driver }) => {
    // int8 (COUNT(*), bigint columns) arrives as a string by default; every count we keep fits a JS number.
    driver.types.setTypeParser(20, (v) => Number.parseInt(v, 10));
    return driver;
  });
  return postgresDriver;
}

export async function openStore(options: StoreOptions): Promise<Store> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options) : openSqlite(options);
}

/** Kysely's log hook: it measures every statement the query builder runs (it reports each query's duration and whether it failed). */
function queryLog(onQuery: StoreOptions['onQuery']): KyselyConfig['log'] {
  if (onQuery === undefined) return undefined;
  return (event: LogEvent) => {
    const endedAt = epochMs();
    onQuery({
      sql: event.query.sql,
      startedAt: endedAt - event.queryDurationMillis,
      endedAt,
      failed: event.level === 'error',
    });
  };
}

/**
 * Times a compiled-statement read that bypasses Kysely (reads routed through Kysely are timed by `queryLog`, so each
 * statement is reported once).
 */
async function timedRead<Row>(
  onQuery: StoreOptions['onQuery'],
  sql: string,
  run: () => Row[] | Promise<Row[]>,
): Promise<Row[]> {
  if (onQuery === undefined) return run();
  const startedAt = epochMs();
  let failed = true;
  try {
    const rows = await run();
    failed = false;
    return rows;
  } finally {
    onQuery({ sql, startedAt, endedAt: epochMs(), failed });
  }
}

function openSqlite(options: StoreOptions): Store {
  const file =
    options.sqliteFile === ':memory:' ? ':memory:' : join(options.dataDir, options.sqliteFile ?? 'parley.db');
  if (file !== ':memory:') mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const sqlite = new SQLite(file);
  // WAL lets the CLI write while the server reads; busy_timeout makes concurrent writers wait instead of failing.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  // Deleted content is overwritten with zeros, not just unlinked (https://sqlite.org/pragma.html#pragma_secure_delete):
  // an erasure (privacy/) must not leave a visitor's words in free pages of the file.
  sqlite.pragma('secure_delete = ON');
  const statements = withStatementCache(sqlite);
  const dataVersion = sqlite.prepare('pragma data_version').pluck();
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: statements }),
    log: queryLog(options.onQuery),
  });
  return {
    db,
    dialect: 'sqlite',
    describe: `sqlite:${file}`,
    writes: new GroupCommit(db, 'sqlite'),
    othersCommits: () => dataVersion.get() as number,
    read: async <Row>(sql: string, parameters: readonly unknown[]) => {
      // Kysely serialises use of the one connection; while one of its transactions is open, a direct read would
      // run inside it, so it queues behind it like any other query instead.
      if (sqlite.inTransaction)
        return (await db.executeQuery<Row>(CompiledQuery.raw(sql, [...parameters]))).rows;
      return timedRead(options.onQuery, sql, () => statements.prepare(sql).all(parameters) as Row[]);
    },
    // A synchronous in-process database answers or throws at once; a hung SQLite is not a state we can observe.
    ping: async () => {
      sqlite.prepare('select 1').get();
    },
    close: () => db.destroy(),
  };
}

const ROLLBACK = /^\s*rollback\s*;?\s*$/i;

/** What Kysely's ROLLBACK runs when SQLite has no transaction open any more: nothing. */
const ALREADY_ROLLED_BACK = {
  reader: false,
  all: () => [],
  run: () => ({ changes: 0, lastInsertRowid: 0 }),
  iterate: () => [][Symbol.iterator](),
} as unknown as ReturnType<SqliteDatabase['prepare']>;

/**
 * Kysely prepares every SQLite statement afresh; preparing costs more than running most of our queries (profiled on
 * the token endpoint: 59 µs through Kysely vs 14 µs with a reused statement). Queries are built from a fixed set of
 * shapes, so a small LRU of prepared statements keyed by SQL text removes that cost. Safe because better-sqlite3 is
 * synchronous and we never stream rows (an iterating statement would be busy).
 */
function withStatementCache(sqlite: SQLite.Database, max = 512): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => {
      cache.clear();
      sqlite.close();
    },
    prepare(sql: string) {
      // After SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM or SQLITE_BUSY SQLite may already have rolled the whole
      // transaction back itself (https://www.sqlite.org/lang_transaction.html, "Response To Errors Within A
      // Transaction"). Kysely's ROLLBACK would then fail with "cannot rollback - no transaction is active", and that
      // error would replace the one that tells the caller the disk is full (a 500 instead of a 503).
      if (!sqlite.inTransaction && ROLLBACK.test(sql)) return ALREADY_ROLLED_BACK;
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql);
      } else {
        statement = sqlite.prepare(sql);
        if (cache.size >= max) cache.delete(cache.keys().next().value!);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

async function openPostgres(url: string, options: StoreOptions): Promise<Store> {
  const pg = await loadPostgresDriver();
  const schema = options.schema;
  if (schema) {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error('invalid PostgreSQL schema name');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    } finally {
      await client.end();
    }
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 20,
    // A stopped or unreachable server must cost callers at most this long, never a hang (they answer 503).
    connectionTimeoutMillis: options.connectTimeoutMs ?? 2_000,
    query_timeout: options.queryTimeoutMs ?? 10_000,
    keepAlive: true,
    // Names Parley's sessions in pg_stat_activity (per schema when a deployment or test isolates itself in one).
    application_name: schema ? `parley:${schema}` : 'parley',
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // An idle pooled connection that the server drops (restart, pg_terminate_backend: 57P01) emits 'error' on the
  // pool; without a listener that is an uncaught exception that ends the process. The pool discards the broken
  // client and opens a new one on the next query, so reconnecting needs nothing more.
  pool.on('error', (error) => options.onIdleError?.(error));
  // The same loss while a client is checked out (Kysely holds one between the statements of a transaction) is
  // emitted on that client, where the pool's listener is not attached. The statement in flight fails on its own
  // (and its request answers 503); the event itself must not end the process, so it is only swallowed here.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: queryLog(options.onQuery) });
  const parsed = new URL(url);
  return {
    db,
    dialect: 'postgres',
    writes: new GroupCommit(db, 'postgres'),
    describe: `postgres://${parsed.host}${parsed.pathname}${schema ? ` (schema ${schema})` : ''}`,
    read: <Row>(sql: string, parameters: readonly unknown[]) =>
      timedRead(options.onQuery, sql, async () => (await pool.query(sql, [...parameters])).rows as Row[]),
    ping: async (timeoutMs) => {
      await pool.query({ text: 'select 1', query_timeout: timeoutMs } as pg.QueryConfig);
    },
    close: () => db.destroy(),
  };
}
