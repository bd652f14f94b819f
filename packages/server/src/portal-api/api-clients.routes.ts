import { Type } from '@sinclair/typebox';
import type { App } from '../http/types.ts';
import { apiClientView } from '../oauth/api-clients.service.ts';
import { SCOPES } from '../oauth/principal.ts';
import { PageQuery, pageOf } from './pagination.ts';
import { actorOf, type PortalDeps, sessionOf } from './portal-auth.ts';

const CreateClient = Type.Object(
  {
    name: Type.String({ maxLength: 1000 }),
    scopes: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 20 }),
  },
  { additionalProperties: false },
);
const ClientIdParams = Type.Object({ clientId: Type.String({ maxLength: 200 }) });

/**
 * Settings → API clients, over the OAuth capability's ApiClientsService (it validates, stores only a digest of
 * the secret and writes the audit events). The secret appears in exactly one response: the 201 of the creation.
 */
export function registerApiClientRoutes(app: App, { ctx }: PortalDeps): void {
  const clients = () => ctx.oauth.clients;

  app.get('/api-clients', { schema: { querystring: PageQuery } }, async (request) => ({
    ...pageOf((await clients().list(sessionOf(request).user.companyId)).map(apiClientView), request.query),
    available_scopes: SCOPES,
  }));

  app.post('/api-clients', { schema: { body: CreateClient } }, async (request, reply) => {
    const { client, secret } = await clients().create({
      companyId: sessionOf(request).user.companyId,
      name: request.body.name,
      scopes: request.body.scopes,
      actor: actorOf(request),
    });
    return reply.status(201).send({ ...apiClientView(client), client_secret: secret });
  });

  app.delete('/api-clients/:clientId', { schema: { params: ClientIdParams } }, async (request, reply) => {
    await clients().delete(sessionOf(request).user.companyId, request.params.clientId, actorOf(request));
    return reply.status(204).send();
  });
}
