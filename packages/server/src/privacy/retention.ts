import type { Kysely } from 'kysely';
import type { ScheduledJob } from '../jobs/scheduler.ts';
import { now } from '../storage/columns.ts';
import type { Dialect } from '../storage/database.ts';
import type { Database } from '../storage/schema.ts';
import { deleteBatchOf, type PrivacyService } from './privacy.service.ts';
import { type PrivacyDatabase, privacyDb } from './privacy.tables.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** How often the sweep runs (on one node of the cluster); a run with work left is due again at once. */
const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

/** A company's retention periods in days; `null` keeps for ever. The defaults (all off) are docs/privacy.md's. */
export interface RetentionSettings {
  resolved_conversation_days: number | null;
  delivered_webhook_days: number | null;
  audit_days: number | null;
}

export const DEFAULT_RETENTION: RetentionSettings = {
  resolved_conversation_days: null,
  delivered_webhook_days: null,
  audit_days: null,
};

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
}

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

  constructor(private readonly options: RetentionSweeperOptions) {
    this.db = privacyDb(options.db);
    this.batchSize = options.batchSize ?? deleteBatchOf(options.dialect);
  }

  async runBatch(nowMs: number): Promise<{ more: boolean }> {
    const companies = await this.db.selectFrom('privacy_settings').selectAll().execute();
    let more = false;
    for (const settings of companies) {
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
    const messages = await this.db
      .selectFrom('messages')
      .select('id')
      .where('conversation_id', 'in', ids)
      .limit(this.batchSize)
      .execute();
    if (messages.length > 0) {
      const deleted = await this.db
        .deleteFrom('messages')
        .where(
          'id',
          'in',
          messages.map((m) => m.id),
        )
        .executeTakeFirst();
      this.report('message', Number(deleted.numDeletedRows));
      if (messages.length === this.batchSize) return true;
    }
    let conversations = 0;
    for (const id of ids) {
      const removed = await this.options.privacy.deleteConversation(id);
      conversations += removed.conversations;
      this.report('message', removed.messages);
      this.report('webhook_event', removed.webhook_events);
      this.report('webhook_delivery', removed.webhook_deliveries);
    }
    this.report('conversation', conversations);
    return true;
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
    if (orphans.length > 0) {
      const deleted = await this.db
        .deleteFrom('webhook_events')
        .where(
          'id',
          'in',
          orphans.map((row) => row.id),
        )
        .executeTakeFirst();
      this.report('webhook_event', Number(deleted.numDeletedRows));
    }
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
    const deleted = await this.db
      .deleteFrom('audit_events')
      .where(
        'id',
        'in',
        due.map((row) => row.id),
      )
      .executeTakeFirst();
    this.report('audit_event', Number(deleted.numDeletedRows));
    return due.length === this.batchSize;
  }

  private report(kind: RetentionKind, count: number): void {
    if (count > 0) this.options.onDeleted?.(kind, count);
  }
}
