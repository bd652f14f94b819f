import { type Command, UsageError } from '../cli-kit/command.ts';
import type { AuditEvent, AuditLog } from './audit.service.ts';

/** What these commands use; the CLI (cli/main.ts) hands it over from the services it built. */
export interface AuditCommandDeps {
  audit: Pick<AuditLog, 'list'>;
}

const list: Command<{ events: Array<Record<string, unknown>> }, AuditCommandDeps> = {
  name: 'audit list',
  summary: 'list audit events, newest first',
  options: {
    company: { description: 'only this company' },
    type: { description: 'only this event type, e.g. token.issued' },
    limit: { description: 'at most this many (1-1000, default 100)' },
  },
  async run(options, ctx) {
    const limit = options.limit === undefined ? 100 : Number(options.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw new UsageError('--limit must be 1 to 1000');
    const events = await ctx.audit.list({
      companyId: typeof options.company === 'string' ? options.company : undefined,
      type: typeof options.type === 'string' ? options.type : undefined,
      limit,
    });
    return { events: events.map(view) };
  },
  format: (r) =>
    r.events
      .map((e) => `${e.created_at}  ${e.type}  ${e.subject ?? ''}  ${JSON.stringify(e.details)}`)
      .join('\n') || '(no events)',
};

const view = (e: AuditEvent) => ({
  id: e.id,
  type: e.type,
  company_id: e.companyId,
  actor: e.actor,
  subject: e.subject,
  ip: e.ip,
  details: e.details,
  created_at: e.createdAt,
});

export const auditCommands = [list];
