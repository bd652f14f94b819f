import type { CannedResponseList } from '@parley/wire-types';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AuditLog } from '../../audit/audit.service.ts';
import type { App } from '../../http/types.ts';
import { actorOf, companyOf } from '../../users/portal-session.ts';
import { type CannedResponsesService, SHORTCUT_PATTERN } from './canned-responses.service.ts';

const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
const Body = Type.Object(
  {
    shortcut: Type.String({ pattern: SHORTCUT_PATTERN }),
    title: Type.String({ minLength: 1, maxLength: 200 }),
    content: Type.String({ minLength: 1, maxLength: 20_000 }),
  },
  { additionalProperties: false },
);
const ListQuery = Type.Object(
  { q: Type.Optional(Type.String({ maxLength: 100 })) },
  { additionalProperties: false },
);

/**
 * Canned responses in the portal (docs/routing.md "Canned responses"): every portal user reads them (the inbox's
 * `/` menu), admins write them. Each write is audited.
 */
/** What canned responses in the portal use. */
export interface CannedResponsePortalDeps {
  cannedResponses: Pick<CannedResponsesService, 'list' | 'create' | 'update' | 'delete'>;
  audit: Pick<AuditLog, 'record'>;
}

export function registerCannedResponsePortalRoutes(app: App, deps: CannedResponsePortalDeps): void {
  const audit = (request: FastifyRequest, type: string, subject: string) =>
    deps.audit.record({
      type,
      companyId: companyOf(request),
      actor: actorOf(request),
      subject,
      ip: request.ip,
    });

  app.get(
    '/canned-responses',
    { config: { portalAccess: 'any' }, schema: { querystring: ListQuery } },
    async (request): Promise<CannedResponseList> => ({
      items: await deps.cannedResponses.list(companyOf(request), request.query.q),
    }),
  );

  app.post('/canned-responses', { schema: { body: Body } }, async (request, reply) => {
    const created = await deps.cannedResponses.create(companyOf(request), request.body);
    await audit(request, 'canned_response.created', created.id);
    return reply.status(201).send(created);
  });

  app.put('/canned-responses/:id', { schema: { params: IdParams, body: Body } }, async (request) => {
    const updated = await deps.cannedResponses.update(companyOf(request), request.params.id, request.body);
    await audit(request, 'canned_response.updated', updated.id);
    return updated;
  });

  app.delete('/canned-responses/:id', { schema: { params: IdParams } }, async (request, reply) => {
    await deps.cannedResponses.delete(companyOf(request), request.params.id);
    await audit(request, 'canned_response.deleted', request.params.id);
    return reply.status(204).send();
  });
}
