import type { ConnectorCheckView, ConnectorListing } from '@parley/wire-types';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { PageQuery, pageOf } from '../http/offset-page.ts';
import type { App } from '../http/types.ts';
import { actorOf, sessionOf } from '../users/portal-session.ts';
import { connectorType, connectorTypeNames } from './connector-types.ts';
import { connectorView, keyRotationView } from './connectors.schemas.ts';
import type { Actor, ConnectorsService } from './connectors.service.ts';
import type { OutboundClient } from './outbound.ts';

// Lengths are checked by the connectors service (its codes and messages); these bounds only stop absurd bodies.
const CreateConnector = Type.Object(
  {
    name: Type.String({ maxLength: 1000 }),
    type: Type.String({ maxLength: 100 }),
    url: Type.Optional(Type.String({ maxLength: 4096 })),
    api_key: Type.Optional(Type.String({ maxLength: 8192 })),
  },
  { additionalProperties: false },
);
const RotateKey = Type.Object({ api_key: Type.String({ maxLength: 8192 }) }, { additionalProperties: false });
const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

const actor = (request: FastifyRequest): Actor => ({ actor: actorOf(request), ip: request.ip });

/**
 * Settings → Connectors, over the integrations capability (ConnectorsService seals keys and audits; the outbound
 * client performs the connection test with the current key). Keys only ever travel inward, in create and rotate.
 */
/** What the portal's connector routes use. */
export interface ConnectorPortalDeps {
  connectors: Pick<ConnectorsService, 'list' | 'create' | 'rotateKey' | 'delete'>;
  connectorCaller: Pick<OutboundClient, 'check'>;
}

export function registerConnectorPortalRoutes(app: App, deps: ConnectorPortalDeps): void {
  app.get(
    '/connectors',
    { schema: { querystring: PageQuery } },
    async (request): Promise<ConnectorListing> => ({
      ...pageOf(
        (await deps.connectors.list(sessionOf(request).user.companyId)).map(connectorView),
        request.query,
      ),
      types: connectorTypeNames().map((name) => ({
        name,
        summary: connectorType(name)!.summary,
        default_url: connectorType(name)!.defaultUrl ?? null,
      })),
    }),
  );

  app.post('/connectors', { schema: { body: CreateConnector } }, async (request, reply) => {
    const { name, type, url, api_key } = request.body;
    const connector = await deps.connectors.create(
      {
        companyId: sessionOf(request).user.companyId,
        name,
        type,
        url: url?.trim() ? url.trim() : undefined,
        apiKey: api_key === '' ? undefined : api_key,
      },
      actor(request),
    );
    return reply.status(201).send(connectorView(connector));
  });

  app.put('/connectors/:id/api-key', { schema: { params: IdParams, body: RotateKey } }, async (request) => {
    const rotation = await deps.connectors.rotateKey(
      {
        companyId: sessionOf(request).user.companyId,
        connectorId: request.params.id,
        apiKey: request.body.api_key,
      },
      actor(request),
    );
    return keyRotationView(rotation);
  });

  app.post(
    '/connectors/:id/check',
    { schema: { params: IdParams } },
    async (request): Promise<ConnectorCheckView> =>
      deps.connectorCaller.check(sessionOf(request).user.companyId, request.params.id),
  );

  app.delete('/connectors/:id', { schema: { params: IdParams } }, async (request, reply) => {
    await deps.connectors.delete(sessionOf(request).user.companyId, request.params.id, actor(request));
    return reply.status(204).send();
  });
}
