import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { App } from '../http/types.ts';
import { SHORTCUT_PATTERN } from '../webchat/canned-responses/canned-responses.service.ts';
import type { Webchat } from '../webchat/webchat-services.ts';
import { actorOf, companyOf } from './portal-auth.ts';

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
export function registerCannedResponseRoutes(app: App, webchat: Webchat): void {
  const audit = (request: FastifyRequest, type: string, subject: string) =>
    webchat.audit.record({
      type,
      companyId: companyOf(request),
      actor: actorOf(request),
      subject,
      ip: request.ip,
    });

  app.get(
    '/canned-responses',
    { config: { portalAccess: 'any' }, schema: { querystring: ListQuery } },
    async (request) => ({ items: await webchat.cannedResponses.list(companyOf(request), request.query.q) }),
  );

  app.post('/canned-responses', { schema: { body: Body } }, async (request, reply) => {
    const created = await webchat.cannedResponses.create(companyOf(request), request.body);
    await audit(request, 'canned_response.created', created.id);
    return reply.status(201).send(created);
  });

  app.put('/canned-responses/:id', { schema: { params: IdParams, body: Body } }, async (request) => {
    const updated = await webchat.cannedResponses.update(companyOf(request), request.params.id, request.body);
    await audit(request, 'canned_response.updated', updated.id);
    return updated;
  });

  app.delete('/canned-responses/:id', { schema: { params: IdParams } }, async (request, reply) => {
    await webchat.cannedResponses.delete(companyOf(request), request.params.id);
    await audit(request, 'canned_response.deleted', request.params.id);
    return reply.status(204).send();
  });
}
