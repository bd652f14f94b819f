import { type RawBuilder, sql } from 'kysely';
import type { Dialect } from './database.ts';

/**
 * "Now" (plus `offsetMs`) in milliseconds since the epoch, for leases that several nodes compare. On PostgreSQL it
 * is the database server's clock, so nodes whose clocks disagree still agree on when a lease lapsed. SQLite is only
 * ever used by processes of one machine, so the caller's clock is the clock there.
 */
export function clockMs(dialect: Dialect, offsetMs = 0): RawBuilder<number> {
  return dialect === 'postgres'
    ? sql<number>`((extract(epoch from clock_timestamp()) * 1000)::bigint + ${offsetMs})`
    : sql<number>`${Date.now() + offsetMs}`;
}
