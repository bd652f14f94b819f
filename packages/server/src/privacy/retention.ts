import { setImmediate as nextTurn } from 'node:timers/promises';
import type { RetentionSettingsView } from '@parley/wire-types';
import type { Kysely } from 'kysely';
import type { ScheduledJob } from '../jobs/scheduler.ts';
import { now } from '../storage/columns.ts';
import type { Dialect } from '../storage/database.ts';
import type { Database } from '../storage/schema.ts';
import { MessageDeletion } from './message-deletion.ts';
import type { PrivacyService } from './privacy.service.ts';
import { type PrivacyDatabase, privacyDb } from './privacy.tables.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** How often the sweep runs (on one node of the cluster); a run with work left is due again at once. */
const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

/** A company's retention periods in days; `null` keeps for ever. The defaults (all off) are docs/privacy.md's. */
export type RetentionSettings = RetentionSettingsView;

export const DEFAULT_RETENTION: RetentionSettings = {
  resolved_conversation_days: null,
  delivered_webhook_days: null,
  audit_days: null,
};

/**
 * Rows (messages, deliveries, audit entries) one unpaced batch deletes at most, by store: PostgreSQL works beside the
 * event loop; on SQLite the batches are bounded by time instead (batchBudgetOf), this is only their ceiling.
 */
export const deleteBatchOf = (dialect: Dialect): number => (dialect === 'sqlite' ? 50 : 500);

export type RetentionKind = 'conversation' | 'message' | 'webhook_delivery' | 'webhook_event' | 'audit_event';

/** Reads and writes the companies' retention settings (the portal's Privacy page). */
export class RetentionSettingsStore {
  private readonly db: Kysely<PrivacyDatabase>;

  constructor(db: Kysely<Database>) {
    this.db = privacyDb(db);
  }

  async get(companyId: string): Promise<RetentionSettings> {
    const row = await this.db
      .selectFrom('privacy_settings')
      .select(['resolved_conversation_days', 'delivered_webhook_days', 'audit_days'])
      .where('company_id', '=', companyId)
      .executeTakeFirst();
    return row ?? { ...DEFAULT_RETENTION };
  }

  async set(companyId: string, settings: RetentionSettings): Promise<RetentionSettings> {
    const values = { ...settings, updated_at: now() };
    await this.db
      .insertInto('privacy_settings')
      .values({ company_id: companyId, ...values })
      .onConflict((oc) => oc.column('company_id').doUpdateSet(values))
      .execute();
    return this.get(companyId);
  }
}

export interface RetentionSweeperOptions {
  db: Kysely<Database>;
  dialect: Dialect;
  privacy: Pick<PrivacyService, 'deleteConversation'>;
  /** Told what each batch deleted (prom-client counters by kind). */
  onDeleted?(kind: RetentionKind, count: number): void;
  /**
   * Rows (messages, deliveries, audit entries) one batch deletes at most, conversations at most a tenth; by default
   * `deleteBatchOf(dialect)` (50 on SQLite, 500 on PostgreSQL).
   */
  batchSize?: number;
  /**
   * Work one batch does at most, in milliseconds of the store's time, before it answers `more` (default
   * `batchBudgetOf(dialect)`: 10 on SQLite, none on PostgreSQL). On SQLite the messages then go in small statements
   * sized from the measured cost of the last one, with the event loop given back between them.
   */
  batchBudgetMs?: number;
}

/**
 * A batch's time budget by store. better-sqlite3 runs each statement on the server's own thread and a message's
 * FTS5 secure-delete costs about 1 ms, so a batch of 50 held every chat publish of the process for 50–80 ms
 * (`npm run bench -- retention`); 10 ms keeps a publish that arrives mid-batch close to its baseline. PostgreSQL
 * works beside the event loop, so its batches are bounded by rows only.
 */
export const batchBudgetOf = (dialect: Dialect): number =>
  dialect === 'sqlite' ? 10 : Number.POSITIVE_INFINITY;

/**
 * The retention sweep (docs/privacy.md "Retention"), a scheduled job (jobs/scheduler.ts: one node at a time): for
 * each company with settings, conversations closed more than `resolved_conversation_days` ago (with everything an
 * erasure removes), delivered webhook deliveries (and the events left without any) older than
 * `delivered_webhook_days`, and audit entries older than `audit_days`. Each batch deletes a bounded number of rows
 * in short statements, so chat traffic keeps the store between batches; the deletes re-check their conditions, so
 * two sweeps at once only repeat work. Unsent uploads have their own sweeper (webchat/attachments/).
 */
export class RetentionSweeper implements ScheduledJob {
  readonly name = 'privacy.retention';
  readonly intervalMs = SWEEP_INTERVAL_MS;
  private readonly db: Kysely<PrivacyDatabase>;
  private readonly batchSize: number;
  private readonly budgetMs: number;
  private readonly messages: MessageDeletion;
  /** When the current batch started (performance.now()). */
  private batchStarted = 0;

  constructor(private readonly options: RetentionSweeperOptions) {
    this.db = privacyDb(options.db);
    this.batchSize = options.batchSize ?? deleteBatchOf(options.dialect);
    this.budgetMs = options.batchBudgetMs ?? batchBudgetOf(options.dialect);
    this.messages = new MessageDeletion(this.db, options.dialect, { timeSized: this.paced });
  }

  private get paced(): boolean {
    return Number.isFinite(this.budgetMs);
  }

  private overBudget(): boolean {
    return performance.now() - this.batchStarted >= this.budgetMs;
  }

  async runBatch(nowMs: number): Promise<{ more: boolean }> {
    this.batchStarted = performance.now();
    const companies = await this.db.selectFrom('privacy_settings').selectAll().execute();
    let more = false;
    for (const settings of companies) {
      // A budget spent on earlier companies leaves the rest to the next batch (the scheduler runs it at once).
      if (this.paced && more && this.overBudget()) return { more: true };
      if (settings.resolved_conversation_days !== null) {
        more =
          (await this.sweepConversations(
            settings.company_id,
            nowMs - settings.resolved_conversation_days * DAY_MS,
          )) || more;
      }
      if (settings.delivered_webhook_days !== null) {
        more =
          (await this.sweepDeliveries(
            settings.company_id,
            nowMs - settings.delivered_webhook_days * DAY_MS,
          )) || more;
      }
      if (settings.audit_days !== null) {
        more = (await this.sweepAudit(settings.company_id, nowMs - settings.audit_days * DAY_MS)) || more;
      }
    }
    return { more };
  }

  /**
   * Resolved (closed) conversations last changed before the cutoff. A conversation's messages go first, one batch
   * per call, so a conversation with a very long history spans several batches; once it has none left, the
   * conversation itself goes with the rest (PrivacyService.deleteConversation).
   */
  private async sweepConversations(companyId: string, cutoffMs: number): Promise<boolean> {
    const cutoff = new Date(cutoffMs).toISOString();
    const due = await this.db
      .selectFrom('conversations')
      .select('id')
      .where('company_id', '=', companyId)
      .where('status', '=', 'closed')
      .where('updated_at', '<', cutoff)
      .orderBy('updated_at')
      .limit(Math.max(1, Math.floor(this.batchSize / 10)))
      .execute();
    if (due.length === 0) return false;
    const ids = due.map((row) => row.id);
    if (this.paced) return this.sweepConversationsPaced(ids);
    const messages = await this.db
      .selectFrom('messages')
      .select('id')
      .where('conversation_id', 'in', ids)
      .limit(this.batchSize)
      .execute();
    if (messages.length > 0) {
      await this.deleteRows(
        'messages',
        messages.map((m) => m.id),
        'message',
      );
      if (messages.length === this.batchSize) return true;
    }
    for (const id of ids) await this.deleteConversation(id);
    return true;
  }

  /**
   * The SQLite form: messages in short statements with the event loop given back after each (MessageDeletion) until
   * the batch's budget is spent; conversations whose messages are gone follow, one per turn, within the same budget.
   */
  private async sweepConversationsPaced(ids: string[]): Promise<boolean> {
    const { deleted, done } = await this.messages.run(ids, () => this.overBudget());
    this.report('message', deleted);
    if (!done) return true;
    for (const id of ids) {
      await this.deleteConversation(id);
      await nextTurn();
      if (this.overBudget()) return true;
    }
    return true;
  }

  private async deleteConversation(id: string): Promise<void> {
    const removed = await this.options.privacy.deleteConversation(id);
    this.report('conversation', removed.conversations);
    this.report('message', removed.messages);
    this.report('webhook_event', removed.webhook_events);
    this.report('webhook_delivery', removed.webhook_deliveries);
  }

  private async sweepDeliveries(companyId: string, cutoffMs: number): Promise<boolean> {
    const due = await this.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('company_id', '=', companyId)
      .where('status', '=', 'delivered')
      .where('created_ms', '<', cutoffMs)
      .limit(this.batchSize)
      .execute();
    if (due.length > 0) {
      const deleted = await this.db
        .deleteFrom('webhook_deliveries')
        .where(
          'id',
          'in',
          due.map((row) => row.id),
        )
        .where('status', '=', 'delivered')
        .executeTakeFirst();
      this.report('webhook_delivery', Number(deleted.numDeletedRows));
    }
    // Events older than the cutoff that no delivery refers to any more carry nothing anyone will send.
    const orphans = await this.db
      .selectFrom('webhook_events')
      .select('id')
      .where('company_id', '=', companyId)
      .where('created_ms', '<', cutoffMs)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('webhook_deliveries')
              .select('webhook_deliveries.id')
              .whereRef('webhook_deliveries.event_id', '=', 'webhook_events.id'),
          ),
        ),
      )
      .limit(this.batchSize)
      .execute();
    await this.deleteRows(
      'webhook_events',
      orphans.map((row) => row.id),
      'webhook_event',
    );
    return due.length === this.batchSize || orphans.length === this.batchSize;
  }

  private async sweepAudit(companyId: string, cutoffMs: number): Promise<boolean> {
    const due = await this.db
      .selectFrom('audit_events')
      .select('id')
      .where('company_id', '=', companyId)
      .where('created_at', '<', new Date(cutoffMs).toISOString())
      .limit(this.batchSize)
      .execute();
    if (due.length === 0) return false;
    await this.deleteRows(
      'audit_events',
      due.map((row) => row.id),
      'audit_event',
    );
    return due.length === this.batchSize;
  }

  /** Deletes the rows `ids` of `table` (none: nothing to do) and counts them as `kind`. */
  private async deleteRows(
    table: 'messages' | 'webhook_events' | 'audit_events',
    ids: string[],
    kind: RetentionKind,
  ): Promise<void> {
    if (ids.length === 0) return;
    const deleted = await this.db.deleteFrom(table).where('id', 'in', ids).executeTakeFirst();
    this.report(kind, Number(deleted.numDeletedRows));
  }

  private report(kind: RetentionKind, count: number): void {
    if (count > 0) this.options.onDeleted?.(kind, count);
  }
}
