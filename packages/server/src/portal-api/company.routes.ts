import { Type } from '@sinclair/typebox';
import type { App } from '../http/types.ts';
import { normalizeOrigin } from '../webchat/channels/channels.service.ts';
import { actorOf, type PortalDeps, sessionOf } from './portal-auth.ts';

const Origins = Type.Object(
  { allowed_origins: Type.Array(Type.String({ maxLength: 300 }), { maxItems: 50 }) },
  { additionalProperties: false },
);

/** Company settings: the id integrators send as `X-Company`, and the browser origins allowed to embed the widget. */
export function registerCompanyRoutes(app: App, { ctx }: PortalDeps): void {
  const view = async (companyId: string) => {
    const company = await ctx.companies.get(companyId);
    return {
      id: company.id,
      name: company.name,
      allowed_origins: company.allowedOrigins,
      created_at: company.createdAt,
    };
  };

  app.get('/company', async (request) => view(sessionOf(request).user.companyId));

  app.put('/company/allowed-origins', { schema: { body: Origins } }, async (request) => {
    const companyId = sessionOf(request).user.companyId;
    const origins = [
      ...new Set(
        request.body.allowed_origins
          .map((o) => o.trim())
          .filter(Boolean)
          .map(normalizeOrigin),
      ),
    ];
    await ctx.companies.setAllowedOrigins(companyId, origins);
    await ctx.audit.record({
      type: 'company.allowed_origins_changed',
      companyId,
      actor: actorOf(request),
      subject: companyId,
      ip: request.ip,
      details: { allowed_origins: origins },
    });
    return view(companyId);
  });
}
