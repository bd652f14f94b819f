/**
 * Which errors mean "the store cannot take this right now" rather than "this query is wrong": a lost connection, a
 * full disk, an I/O error, a store gone read-only. Callers answer those with 503 `store_unavailable` and
 * `Retry-After` (the client tries again; nothing was half-written, because every write runs in a transaction that
 * the database rolls back when it fails or its connection dies).
 */

/**
 * PostgreSQL SQLSTATEs (PostgreSQL manual, Appendix A): class 08 (connection exception), 57P01–57P05
 * (administrator/crash shutdown, cannot connect now, database dropped, idle session timeout), 57014 (statement
 * cancelled, e.g. by `statement_timeout` on an overloaded server), class 53 (insufficient resources: disk full, out
 * of memory, too many connections), class 58 (system error: I/O error, missing file), 25006 (read-only
 * transaction: a failover left the node on a standby), and from class 40 (transaction rollback) 40001
 * (serialization failure) and 40P01 (deadlock detected): the database rolled the whole transaction back and the same
 * request can simply be tried again, which is what 503 with `Retry-After` tells the client.
 */
const POSTGRES_UNAVAILABLE = /^(08|57P0[1-5]|57014|53|58|25006|40001|40P01)/;

/** Socket-level failures while talking to PostgreSQL (refused, reset, unreachable, DNS). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLite result codes of a database that is busy past `busy_timeout`, locked, whose disk is full, whose file cannot
 * be read or written or became read-only (remounted, permissions), or that ran out of memory
 * (https://www.sqlite.org/rescode.html); extended codes (SQLITE_IOERR_WRITE, SQLITE_READONLY_DBMOVED…) share the
 * prefix.
 */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|PROTOCOL|READONLY|NOMEM)/;

/** node-postgres raises these as plain Errors without a code. */
const POOL_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'Client has encountered a connection error and is not queryable',
  'Cannot use a pool after calling end on the pool',
];

export function isStoreUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string') {
      if (POSTGRES_UNAVAILABLE.test(code) || NETWORK_CODES.has(code) || SQLITE_UNAVAILABLE.test(code))
        return true;
    }
    if (typeof message === 'string' && POOL_MESSAGES.some((m) => message.includes(m))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
