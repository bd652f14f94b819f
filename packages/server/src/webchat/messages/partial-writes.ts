import { sql } from 'kysely';
import { compileOnce } from '../../storage/compiled.ts';
import type { Store } from '../../storage/database.ts';
import type { MessagesTable } from '../webchat.tables.ts';

/** A streaming reply's latest snapshot as stored, with the highest sequence its envelopes may use from now on. */
export type PartialRow = Pick<MessagesTable, 'id' | 'blocks' | 'sequence' | 'updated_at'>;

interface Waiting {
  row: PartialRow;
  callers: Array<{ resolve(stored: boolean): void; reject(error: unknown): void }>;
}

/** Rows of one statement at most: 4 parameters each, far below both engines' limits (SQLite 32,766). */
const MAX_ROWS = 200;

/**
 * Writes the partial snapshots of streaming replies, all those that fall due together at once: on PostgreSQL as ONE
 * multi-row UPDATE, on SQLite as one write of single-row UPDATEs.
 *
 * Why: every streaming reply stores its snapshot once a `PARLEY_WEBCHAT_STREAM_PERSIST_INTERVAL_MS`, so a thousand
 * replies under way are a thousand single-row writes a second; on PostgreSQL each was a transaction of three round
 * trips holding a pooled connection, competing with the visitors' messages for the pool (measured on a burst of
 * 1,000: 1.2 partial writes per message, 3.7 of its 28 statements; docs/operations.md "Capacity"). Here one statement
 * is in flight at a time: the rows that fall due while it runs wait and go together in the next one, so partials take
 * at most one connection however many replies stream, and a slow store batches more instead of queueing more.
 * SQLite has no round trips to save, and its UPDATE … FROM costs far more than the rows it joins (measured on 20,000
 * messages: 222 µs to 6 ms for two rows, against 4.5 µs per single-row UPDATE by primary key), so there the rows go
 * one statement each, in one write of the turn's shared commit, without a savepoint each.
 *
 * Each row is written only while its message is still partial (as before: once a node completed it, no late write
 * undoes that); a caller learns whether its row was written. A stream has one write in flight at a time
 * (conversations/reply-stream.ts); should a second row of one message wait, the newer replaces it (its reservation is
 * the higher) and both callers get the outcome.
 */
export class PartialWrites {
  private waiting = new Map<string, Waiting>();
  private draining = false;

  /** SQLite's statement: one row by primary key, compiled once (storage/compiled.ts). */
  private readonly updateOne;

  constructor(private readonly store: Pick<Store, 'db' | 'dialect' | 'writes'>) {
    this.updateOne = compileOnce<PartialRow>((arg) =>
      store.db
        .updateTable('messages')
        .set({ blocks: arg('blocks'), sequence: arg('sequence'), updated_at: arg('updated_at') })
        .where('id', '=', arg('id'))
        .where('status', '=', 'partial'),
    );
  }

  /** Stores `row` with the others due now; false when the message is no longer partial. */
  write(row: PartialRow): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      const waiting = this.waiting.get(row.id);
      if (waiting) {
        waiting.row = row;
        waiting.callers.push({ resolve, reject });
      } else this.waiting.set(row.id, { row, callers: [{ resolve, reject }] });
      if (this.draining) return;
      this.draining = true;
      // The rows of this event-loop turn go together.
      setImmediate(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.size > 0) {
      const batch = [...this.waiting.values()].slice(0, MAX_ROWS);
      for (const { row } of batch) this.waiting.delete(row.id);
      try {
        const stored = await this.update(batch.map((w) => w.row));
        for (const { row, callers } of batch) for (const c of callers) c.resolve(stored.has(row.id));
      } catch (error) {
        for (const { callers } of batch) for (const c of callers) c.reject(error);
      }
    }
    this.draining = false;
  }

  /** The ids of the rows written. */
  private update(rows: PartialRow[]): Promise<Set<string>> {
    return this.store.dialect === 'sqlite' ? this.updateEach(rows) : this.updateAll(rows);
  }

  /** PostgreSQL: one statement, a CTE of values joined by UPDATE … FROM. */
  private async updateAll(rows: PartialRow[]): Promise<Set<string>> {
    // The cast types the sequence, since a bare parameter in VALUES is text.
    const values = sql.join(
      rows.map((r) => sql`(${r.id}, ${r.blocks}, cast(${r.sequence} as integer), ${r.updated_at})`),
    );
    const query = sql<{ id: string }>`with due (id, blocks, sequence, updated_at) as (values ${values})
      update messages set blocks = due.blocks, sequence = due.sequence, updated_at = due.updated_at
      from due where messages.id = due.id and messages.status = 'partial'
      returning messages.id`.compile(this.store.db);
    const result = await this.store.writes.statement(query);
    return new Set(result.rows.map((r) => r.id));
  }

  /** SQLite: one write, a statement per row. */
  private updateEach(rows: PartialRow[]): Promise<Set<string>> {
    return this.store.writes.run(async (trx) => {
      const stored = new Set<string>();
      for (const row of rows) {
        const result = await trx.executeQuery(this.updateOne(row));
        if (Number(result.numAffectedRows ?? 0) > 0) stored.add(row.id);
      }
      return stored;
    });
  }
}
