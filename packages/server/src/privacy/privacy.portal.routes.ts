import { Readable } from 'node:stream';
import type { AuditLog } from '../audit/audit.service.ts';
import type { App } from '../http/types.ts';
import { actorOf, sessionOf } from '../users/portal-session.ts';
import { PrivacySelectorBody, RetentionSettings } from './privacy.schemas.ts';
import { type PrivacyService, selectorOf } from './privacy.service.ts';
import type { RetentionSettingsStore } from './retention.ts';

/**
 * The portal's Privacy section (admins only, the default portal access; docs/privacy.md): the company's retention
 * settings, erasure of a visitor's data (the page asks for confirmation first), and the export of a visitor's data
 * (the page downloads it as a file).
 */
/** What the Privacy section uses. */
export interface PrivacyPortalDeps {
  retention: Pick<RetentionSettingsStore, 'get' | 'set'>;
  visitorData: Pick<PrivacyService, 'erase' | 'exportJson'>;
  audit: Pick<AuditLog, 'record'>;
}

export function registerPrivacyPortalRoutes(app: App, deps: PrivacyPortalDeps): void {
  app.get('/company/retention', async (request) => deps.retention.get(sessionOf(request).user.companyId));

  app.put('/company/retention', { schema: { body: RetentionSettings } }, async (request) => {
    const companyId = sessionOf(request).user.companyId;
    const saved = await deps.retention.set(companyId, request.body);
    await deps.audit.record({
      type: 'company.retention_changed',
      companyId,
      actor: actorOf(request),
      subject: companyId,
      ip: request.ip,
      details: { ...saved },
    });
    return saved;
  });

  app.post('/privacy/erasures', { schema: { body: PrivacySelectorBody } }, async (request) => {
    const companyId = sessionOf(request).user.companyId;
    // The realtime engine runs in this process: live sessions are disconnected on every node through its broker.
    return deps.visitorData.erase(companyId, selectorOf(request.body), {
      actor: actorOf(request),
      ip: request.ip,
    });
  });
  // The same document as the platform's export (docs/privacy.md "Export"), streamed; `no-store` because it is
  // personal data that no cache between the browser and the server may keep.
  app.post('/privacy/exports', { schema: { body: PrivacySelectorBody } }, async (request, reply) => {
    const companyId = sessionOf(request).user.companyId;
    const parts = await deps.visitorData.exportJson(companyId, selectorOf(request.body));
    reply
      .header('content-type', 'application/json; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-disposition', 'attachment; filename="visitor-export.json"');
    return reply.send(Readable.from(parts));
  });
}
