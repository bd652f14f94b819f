import type { CompanyView } from '@parley/wire-types';
import { Type } from '@sinclair/typebox';
import type { AuditLog } from '../audit/audit.service.ts';
import type { CompaniesService } from '../companies/companies.service.ts';
import type { App } from '../http/types.ts';
import { actorOf, sessionOf } from '../users/portal-session.ts';
import type { AttachmentsService } from './attachments/attachments.service.ts';
import { ATTACHMENT_TYPES } from './attachments/content-types.ts';
import { normalizeOrigin } from './channels/channels.service.ts';

const Origins = Type.Object(
  { allowed_origins: Type.Array(Type.String({ maxLength: 300 }), { maxItems: 50 }) },
  { additionalProperties: false },
);

const AttachmentLimits = Type.Object(
  {
    max_attachment_bytes: Type.Integer({ minimum: 1, maximum: 1024 * 1024 * 1024 }),
    allowed_types: Type.Array(Type.Union(ATTACHMENT_TYPES.map((t) => Type.Literal(t))), { maxItems: 20 }),
  },
  { additionalProperties: false },
);

/**
 * Company settings: the id integrators send as `X-Company`, the browser origins allowed to embed the widget, and
 * the attachment limits (docs/design.md "Attachments").
 */
/** What the company settings page uses: the company, its attachment limits, the audit log. */
export interface CompanyPortalDeps {
  companies: Pick<CompaniesService, 'get' | 'setAllowedOrigins'>;
  attachments: Pick<AttachmentsService, 'settingsFor' | 'updateSettings'>;
  audit: Pick<AuditLog, 'record'>;
}

export function registerCompanyPortalRoutes(app: App, deps: CompanyPortalDeps): void {
  const view = async (companyId: string): Promise<CompanyView> => {
    const company = await deps.companies.get(companyId);
    const attachments = await deps.attachments.settingsFor(companyId);
    return {
      id: company.id,
      name: company.name,
      allowed_origins: company.allowedOrigins,
      attachments: {
        max_attachment_bytes: attachments.maxAttachmentBytes,
        allowed_types: attachments.allowedTypes,
      },
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
    await deps.companies.setAllowedOrigins(companyId, origins);
    await deps.audit.record({
      type: 'company.allowed_origins_changed',
      companyId,
      actor: actorOf(request),
      subject: companyId,
      ip: request.ip,
      details: { allowed_origins: origins },
    });
    return view(companyId);
  });

  app.put('/company/attachments', { schema: { body: AttachmentLimits } }, async (request) => {
    const companyId = sessionOf(request).user.companyId;
    const settings = await deps.attachments.updateSettings(companyId, {
      maxAttachmentBytes: request.body.max_attachment_bytes,
      allowedTypes: request.body.allowed_types,
    });
    await deps.audit.record({
      type: 'company.attachment_settings_changed',
      companyId,
      actor: actorOf(request),
      subject: companyId,
      ip: request.ip,
      details: { max_attachment_bytes: settings.maxAttachmentBytes, allowed_types: settings.allowedTypes },
    });
    return view(companyId);
  });
}
