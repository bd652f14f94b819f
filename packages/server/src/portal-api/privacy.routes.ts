import { Readable } from 'node:stream';
import type { AuditLog } from '../audit/audit.service.ts';
import type { App } from '../http/types.ts';
import type { Privacy } from '../privacy/privacy.module.ts';
import { PrivacySelectorBody, RetentionSettings } from '../privacy/privacy.schemas.ts';
import { selectorOf } from '../privacy/privacy.service.ts';
import { actorOf, sessionOf } from '../users/portal-session.ts';

/**
 * The portal's Privacy section (admins only, the default portal access; docs/privacy.md): the company's retention
 * settings, erasure of a visitor's data (the page asks for confirmation first), and the export of a visitor's data
 * (the page downloads it as a file).
 */
/** What the Privacy section uses. */
export interface PrivacyPortalDeps {
  privacy: Pick<Privacy, 'service' | 'retention'>;
  audit: Pick<AuditLog, 'record'>;
}

export function registerPortalPrivacyRoutes(app: App, deps: PrivacyPortalDeps): void {
  app.get('/company/retention', async (request) =>
    deps.privacy.retention.get(sessionOf(request).user.companyId),
  );

  app.put('/company/retention', { schema: { body: RetentionSettings } }, async (request) => {
    const companyId = sessionOf(request).user.companyId;
    const saved = await deps.privacy.retention.set(companyId, request.body);
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
    return deps.privacy.service.erase(companyId, selectorOf(request.body), {
      actor: actorOf(request),
      ip: request.ip,
    });
  });
  // The same document as the platform's export (docs/privacy.md "Export"), streamed; `no-store` because it is
  // personal data that no cache between the browser and the server may keep.
  app.post('/privacy/exports', { schema: { body: PrivacySelectorBody } }, async (request, reply) => {
    const companyId = sessionOf(request).user.companyId;
    const parts = await deps.privacy.service.exportJson(companyId, selectorOf(request.body));
    reply
      .header('content-type', 'application/json; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-disposition', 'attachment; filename="visitor-export.json"');
    return reply.send(Readable.from(parts));
  });
}
