import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.ts';
import { type AuditEventInput, auditRow } from './audit-row.ts';

export type { AuditEventInput } from './audit-row.ts';

export interface AuditEvent extends Required<Omit<AuditEventInput, 'details'>> {
  id: string;
  details: Record<string, unknown>;
  createdAt: string;
}

export interface AuditQuery {
  companyId?: string;
  type?: string;
  subject?: string;
  /**
   * Paging cursor: only events strictly older. Either an ISO timestamp or a cursor from `auditCursor(event)`
   * (`<timestamp>_<id>`), which also orders events that share a millisecond, so no page boundary skips one.
   */
  before?: string;
  limit?: number;
}

export class AuditLog {
  constructor(private readonly db: Kysely<Database>) {}

  async record(event: AuditEventInput, db: Kysely<Database> = this.db): Promise<void> {
    await db.insertInto('audit_events').values(auditRow(event)).execute();
  }

  async list(query: AuditQuery = {}): Promise<AuditEvent[]> {
    let q = this.db.selectFrom('audit_events').selectAll();
    if (query.companyId) q = q.where('company_id', '=', query.companyId);
    if (query.type) q = q.where('type', '=', query.type);
    if (query.subject) q = q.where('subject', '=', query.subject);
    if (query.before) {
      const [time, id] = query.before.split('_', 2) as [string, string | undefined];
      q = id
        ? q.where((eb) =>
            eb.or([eb('created_at', '<', time), eb.and([eb('created_at', '=', time), eb('id', '<', id)])]),
          )
        : q.where('created_at', '<', time);
    }
    const rows = await q
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(Math.min(Math.max(query.limit ?? 100, 1), 1000))
      .execute();
    return rows.map((r) => ({
      id: r.id,
      type: r.type,
      companyId: r.company_id,
      actor: r.actor,
      subject: r.subject,
      ip: r.ip,
      details: JSON.parse(r.details),
      createdAt: r.created_at,
    }));
  }
}

/** The paging cursor that continues after `event` (see AuditQuery.before). */
export const auditCursor = (event: Pick<AuditEvent, 'createdAt' | 'id'>): string =>
  `${event.createdAt}_${event.id}`;
