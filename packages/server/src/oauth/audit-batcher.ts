import { CompiledQuery, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AuditEventInput } from '../audit/audit.service.ts';
import { auditRow } from '../audit/audit-row.ts';
import type { Database } from '../storage/schema.ts';

export interface AuditBatcherOptions {
  /** Longest an event waits in memory before it is written. */
  maxDelayMs: number;
  /** Write at once when this many events wait. */
  maxBatch: number;
}

/**
 * Writes high-rate audit events (`token.issued`, one per grant) in multi-row inserts instead of one write per
 * request: on SQLite one write per grant would be the largest single cost of the token endpoint. Events keep the
 * time they happened (`created_at` is set when recorded, not when written) and land in `audit_events` within
 * `maxDelayMs`; `close()` writes what is left at shutdown. The price is that a crash (not a graceful stop) can lose
 * the last `maxDelayMs` of these events — rare, security-relevant events (failures, client and key changes) are
 * therefore still written synchronously through `AuditLog.record`.
 */
type AuditRow = Database['audit_events'];
const COLUMNS = ['id', 'company_id', 'type', 'actor', 'subject', 'ip', 'details', 'created_at'] as const;

export class AuditBatcher {
  private pending: AuditRow[] = [];
  /** INSERT statements compiled once per batch size for this database's dialect (Kysely's builder is not free). */
  private readonly insertSql = new Map<number, string>();
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly logger: Logger,
    private readonly options: AuditBatcherOptions = { maxDelayMs: 25, maxBatch: 500 },
  ) {}

  record(event: AuditEventInput): void {
    this.pending.push(auditRow(event));
    if (this.pending.length >= this.options.maxBatch) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.options.maxDelayMs);
  }

  /** Writes every waiting event; resolves when they (and earlier batches) are stored. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending.splice(0);
    if (batch.length > 0) {
      // Batches are written one after another, so events land in the order they happened.
      this.flushing = this.flushing.then(() => this.write(batch));
    }
    return this.flushing;
  }

  close(): Promise<void> {
    return this.flush();
  }

  private async write(batch: AuditRow[]): Promise<void> {
    try {
      const parameters = batch.flatMap((row) => COLUMNS.map((column) => row[column]));
      await this.db.executeQuery(CompiledQuery.raw(this.sqlFor(batch), parameters));
    } catch (err) {
      this.logger.error({ err, events: batch.length }, 'writing audit events failed; these events are lost');
    }
  }

  private sqlFor(batch: AuditRow[]): string {
    let sql = this.insertSql.get(batch.length);
    if (!sql) {
      sql = this.db.insertInto('audit_events').values(batch).compile().sql;
      if (this.insertSql.size < 64) this.insertSql.set(batch.length, sql);
    }
    return sql;
  }
}

export { uuidV7 } from '../audit/audit-row.ts';
