import { randomUUID } from 'node:crypto';
import { CompiledQuery, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AuditEventInput } from '../audit/audit.service.ts';
import { now } from '../storage/columns.ts';
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
    this.pending.push({
      id: uuidV7(),
      company_id: event.companyId ?? null,
      type: event.type,
      actor: event.actor ?? null,
      subject: event.subject ?? null,
      ip: event.ip ?? null,
      details: JSON.stringify(event.details ?? {}),
      created_at: now(),
    });
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

let lastMs = -1;
let counter = 0;

/**
 * RFC 9562 UUIDv7: 48 bits of Unix time in ms, a 12-bit counter (§6.2 method 1: monotonic within a millisecond of
 * this process, random start each new millisecond), then random bits. Time-ordered ids are appended at the end of
 * the primary-key index instead of landing at random places in it, which makes each audit insert ~40 % cheaper on
 * SQLite, and events of one millisecond keep their order; they are still ordinary UUIDs for everyone reading them.
 */
export function uuidV7(now = Date.now()): string {
  const random = randomUUID().replace(/-/g, '');
  let ms = now;
  if (ms <= lastMs) {
    ms = lastMs;
    counter++;
    // Counter exhausted: borrow the next millisecond (allowed by §6.2).
    if (counter > 0xfff) {
      ms = lastMs + 1;
      counter = 0;
    }
  } else {
    counter = Number.parseInt(random.slice(0, 3), 16) & 0x7ff;
  }
  lastMs = ms;
  // randomUUID already set the RFC 9562 variant bits (10xx) at hex position 16; they are kept.
  const v = `${ms.toString(16).padStart(12, '0')}7${counter.toString(16).padStart(3, '0')}${random.slice(16)}`;
  return `${v.slice(0, 8)}-${v.slice(8, 12)}-${v.slice(12, 16)}-${v.slice(16, 20)}-${v.slice(20, 32)}`;
}
