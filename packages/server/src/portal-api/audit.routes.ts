import type { AuditPage } from '@parley/wire-types';
import { Type } from '@sinclair/typebox';
import type { AuditLog } from '../audit/audit.service.ts';
import { auditCursor } from '../audit/audit.service.ts';
import { pageLimit } from '../http/offset-page.ts';
import type { App } from '../http/types.ts';
import { sessionOf } from '../users/portal-session.ts';
import type { UsersService } from '../users/users.service.ts';

const AuditQuery = Type.Object(
  {
    type: Type.Optional(Type.String({ maxLength: 100 })),
    subject: Type.Optional(Type.String({ maxLength: 300 })),
    /** Cursor: the `created_at` of the oldest event already shown; the page holds strictly older events. */
    before: Type.Optional(
      Type.String({ maxLength: 80, pattern: '^\\d{4}-\\d{2}-\\d{2}T[0-9:.]+Z(_[0-9a-f-]{36})?$' }),
    ),
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$' })),
  },
  { additionalProperties: false },
);

/**
 * Settings → Audit log: the company's events, newest first, filtered by type and subject, paged by a time cursor.
 * Events hold identifiers and versions only (AuditLog's contract with every capability), so nothing secret is
 * shown; user actors are resolved to their email for reading.
 */
/** What the audit log page uses: the log, and the company's users to name their actions. */
export interface AuditPortalDeps {
  audit: Pick<AuditLog, 'list'>;
  users: Pick<UsersService, 'list'>;
}

export function registerAuditRoutes(app: App, { audit, users }: AuditPortalDeps): void {
  app.get('/audit', { schema: { querystring: AuditQuery } }, async (request): Promise<AuditPage> => {
    const companyId = sessionOf(request).user.companyId;
    const limit = pageLimit(request.query.limit);
    const events = await audit.list({
      companyId,
      type: request.query.type?.trim() || undefined,
      subject: request.query.subject?.trim() || undefined,
      before: request.query.before,
      limit: limit + 1,
    });
    const page = events.slice(0, limit);
    const emails = new Map((await users.list(companyId)).map((u) => [`user:${u.id}`, u.email]));
    return {
      items: page.map((e) => ({
        id: e.id,
        type: e.type,
        actor: e.actor,
        actor_label: (e.actor && emails.get(e.actor)) ?? e.actor,
        subject: e.subject,
        ip: e.ip,
        details: e.details,
        created_at: e.createdAt,
      })),
      next_before: events.length > limit ? auditCursor(page.at(-1)!) : null,
      limit,
    };
  });
}
