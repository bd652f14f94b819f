import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { Dialect } from '../storage/database.ts';
import type { PrivacyDatabase } from './privacy.tables.ts';

/**
 * Rows one statement deletes at most on PostgreSQL, which works beside the event loop (unless time-sized): a long
 * history never holds the store in one long statement.
 */
const POSTGRES_STATEMENT_ROWS = 500;

/** Smallest and largest SQLite message statement, in rows, whatever the measured cost says. */
const MIN_SQLITE_STATEMENT_ROWS = 1;
const MAX_SQLITE_STATEMENT_ROWS = 50;

/**
 * Milliseconds of work one SQLite statement aims at. better-sqlite3 runs each statement on the server's own thread
 * and a message's FTS5 secure-delete costs about 1 ms (`npm run bench -- retention`), so a statement of 50 held
 * every chat publish of the process for 50–80 ms; a few milliseconds keeps a publish arriving meanwhile close to its
 * baseline.
 */
export const SQLITE_STATEMENT_TARGET_MS = 2.5;

/**
 * Deletes the messages of conversations in short statements: on PostgreSQL 500 rows at a time; on SQLite sized from
 * the measured cost of the last statement (aiming at SQLITE_STATEMENT_TARGET_MS), with a macrotask turn after each
 * — a Kysely query on better-sqlite3 resolves in microtasks only, so without it no timer or socket of a chat would
 * run until the deletion ended. The one place both an erasure and the retention sweep delete messages.
 */
export class MessageDeletion {
  /** Rows the next time-sized statement deletes, re-sized after each from its measured cost. */
  private statementRows = 4;
  /** Statements sized by time with a turn after each (SQLite's way; elsewhere when a caller asks for pacing). */
  private readonly timeSized: boolean;

  constructor(
    private readonly db: Kysely<PrivacyDatabase>,
    dialect: Dialect,
    options: { timeSized?: boolean } = {},
  ) {
    this.timeSized = options.timeSized ?? dialect === 'sqlite';
  }

  /**
   * Deletes messages of `conversationIds` until none is left (`done`) or `stop()` says so after a statement;
   * answers how many went.
   */
  async run(
    conversationIds: string[],
    stop: () => boolean = () => false,
  ): Promise<{ deleted: number; done: boolean }> {
    let deleted = 0;
    for (;;) {
      const rows = this.timeSized ? this.statementRows : POSTGRES_STATEMENT_ROWS;
      const batch = await this.db
        .selectFrom('messages')
        .select('id')
        .where('conversation_id', 'in', conversationIds)
        .limit(rows)
        .execute();
      if (batch.length === 0) return { deleted, done: true };
      const started = performance.now();
      const result = await this.db
        .deleteFrom('messages')
        .where(
          'id',
          'in',
          batch.map((row) => row.id),
        )
        .executeTakeFirst();
      deleted += Number(result.numDeletedRows);
      if (this.timeSized) {
        this.resize((performance.now() - started) / batch.length);
        await nextTurn();
      }
      if (stop()) return { deleted, done: false };
    }
  }

  private resize(msPerRow: number): void {
    this.statementRows = Math.min(
      MAX_SQLITE_STATEMENT_ROWS,
      Math.max(MIN_SQLITE_STATEMENT_ROWS, Math.floor(SQLITE_STATEMENT_TARGET_MS / Math.max(msPerRow, 0.01))),
    );
  }
}
