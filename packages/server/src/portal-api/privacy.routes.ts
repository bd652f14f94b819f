import type { App } from '../http/types.ts';
import { PrivacySelectorBody, RetentionSettings } from '../privacy/privacy.schemas.ts';
import { selectorOf } from '../privacy/privacy.service.ts';
import { actorOf, type PortalDeps, sessionOf } from './portal-auth.ts';

/**
 * The portal's Privacy section (admins only, the default portal access; docs/privacy.md): the company's retention
 * settings, and erasure of a visitor's data (the page asks for confirmation first).
 */
export function registerPortalPrivacyRoutes(app: App, { ctx }: PortalDeps): void {
  app.get('/company/retention', async (request) =>
    ctx.privacy.retention.get(sessionOf(request).user.companyId),
  );

  app.put('/company/retention', { schema: { body: RetentionSettings } }, async (request) => {
    const companyId = sessionOf(request).user.companyId;
    const saved = await ctx.privacy.retention.set(companyId, request.body);
    await ctx.audit.record({
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
    return ctx.privacy.service.erase(companyId, selectorOf(request.body), {
      actor: actorOf(request),
      ip: request.ip,
    });
  });
}
