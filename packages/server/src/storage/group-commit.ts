import { CompiledQuery, type Kysely, type QueryResult, type Transaction } from 'kysely';
import type { Dialect } from './dialect.ts';
import type { Database } from './schema.ts';

/**
 * Statements of one write: they run in a transaction and must touch nothing but `trx` — no network, no timers, and
 * never `db` or another `run` (SQLite has one connection: a query outside `trx` would wait for this very transaction).
 */
export type WriteUnit<T> = (trx: Transaction<Database>) => Promise<T>;

interface Pending {
  work: WriteUnit<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * The savepoint statements around each write of a shared commit, built once: a `sql` template is compiled again at
 * every execution, and a burst runs three of these per write (profiled: 0.7 % of a burst's CPU).
 */
const SAVEPOINT = CompiledQuery.raw('savepoint grouped_write');
const RELEASE = CompiledQuery.raw('release savepoint grouped_write');
const ROLLBACK_TO = CompiledQuery.raw('rollback to savepoint grouped_write');

/** At most this many writes share one commit (one event-loop turn rarely brings more). */
const MAX_GROUP = 64;

/**
 * Runs small write transactions, sharing one commit between those that arrive in the same event-loop turn (SQLite).
 *
 * Why: SQLite has one writer, and with WAL most of a short transaction's cost is its commit, which appends every page
 * it changed to the log (profiled on a burst of visitor messages: 14 % of the server's CPU went to commits). Writes
 * that arrive together — a thousand visitors sending at once, their replies starting, streams completing — touch the
 * same pages (the conversations table, the messages index, the reply line), so one commit for the group writes each
 * page once. Each write keeps its own all-or-nothing: it runs inside a SAVEPOINT, and one that fails is rolled back
 * to it alone while the others go on. Every caller's promise settles only after the shared commit, so whatever it
 * acknowledges afterwards (a publish reply, a `complete` envelope) is as durable as with a transaction of its own.
 *
 * PostgreSQL runs each write in a transaction of its own at once: its writers work in parallel on pooled
 * connections and take row locks, so waiting for a turn would only add latency.
 */
export class GroupCommit {
  private pending: Pending[] = [];
  private scheduled = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /** Runs `work` in a transaction (shared on SQLite, see above); settles once its writes are committed or undone. */
  run<T>(work: WriteUnit<T>): Promise<T> {
    if (this.dialect !== 'sqlite') return this.db.transaction().execute(work);
    return this.queue(work);
  }

  /**
   * One statement on its own (it is atomic by itself): PostgreSQL runs it without BEGIN and COMMIT, holding a pooled
   * connection for one round trip instead of three; SQLite runs it in the turn's shared commit like any write.
   */
  statement<Row>(query: CompiledQuery<Row>): Promise<QueryResult<Row>> {
    if (this.dialect !== 'sqlite') return this.db.executeQuery(query);
    return this.queue((trx) => trx.executeQuery(query));
  }

  private queue<T>(work: WriteUnit<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => void this.commitPending());
    });
  }

  private async commitPending(): Promise<void> {
    this.scheduled = false;
    const groups: Pending[][] = [];
    for (let i = 0; i < this.pending.length; i += MAX_GROUP)
      groups.push(this.pending.slice(i, i + MAX_GROUP));
    this.pending = [];
    for (const group of groups) await this.commit(group);
  }

  private async commit(group: Pending[]): Promise<void> {
    if (group.length === 1) {
      const [only] = group as [Pending];
      await this.db.transaction().execute(only.work).then(only.resolve, only.reject);
      return;
    }
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      await this.db.transaction().execute(async (trx) => {
        for (const { work } of group) {
          await trx.executeQuery(SAVEPOINT);
          try {
            const value = await work(trx);
            await trx.executeQuery(RELEASE);
            outcomes.push({ ok: true, value });
          } catch (error) {
            outcomes.push({ ok: false, error });
            // Undo this write only; the savepoint is released so the next one starts from a clean stack.
            await undoSavepoint(trx, error);
          }
        }
      });
    } catch (error) {
      // The commit itself failed, or SQLite rolled the transaction back on its own: nothing of the group is stored,
      // and every write that has no error of its own gets the one that ended the transaction (a full disk is a
      // 503 for all of them, never "no such savepoint").
      group.forEach((unit, i) => {
        const outcome = outcomes[i];
        unit.reject(outcome && !outcome.ok ? outcome.error : error);
      });
      return;
    }
    group.forEach((unit, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) unit.resolve(outcome.value);
      else unit.reject(outcome.error);
    });
  }
}

/**
 * Rolls back to the write's savepoint. When that fails, SQLite has already rolled the whole transaction back itself
 * (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM: https://www.sqlite.org/lang_transaction.html, "Response To Errors Within
 * A Transaction"), so the savepoint is gone: the group ends with the write's own error, its cause.
 */
async function undoSavepoint(trx: Transaction<Database>, cause: unknown): Promise<void> {
  try {
    await trx.executeQuery(ROLLBACK_TO);
    await trx.executeQuery(RELEASE);
  } catch {
    throw cause;
  }
}
