import type { FastifyRequest } from 'fastify';
import { acceptEmptyJsonBodies, requireJson } from '../http/lenient-json.ts';
import type { App } from '../http/types.ts';
import { bearerErrorResponses } from '../oauth/bearer.schemas.ts';
import { type Principal, principalOf } from '../oauth/principal.ts';
import {
  CheckView,
  ConnectorIdParams,
  ConnectorList,
  connectorView,
  KeyRotationView,
  keyRotationView,
  Problem,
  RotateKeyBody,
} from './connectors.schemas.ts';
import type { Actor, ConnectorsService } from './connectors.service.ts';
import type { OutboundClient } from './outbound.ts';

/** What the connector routes use, handed over by the composition root (app.ts). */
export interface ConnectorRouteDeps {
  connectors: Pick<ConnectorsService, 'list' | 'rotateKey'>;
  connectorCaller: Pick<OutboundClient, 'check'>;
}

/**
 * The integrations API for API clients. Every route is bearer-protected by the app-wide hook (config.requiredScope)
 * and scoped to the token's company: another company's connector answers exactly like a missing one (404).
 */
export async function registerConnectorRoutes(app: App, ctx: ConnectorRouteDeps): Promise<void> {
  app.get(
    '/integrations/v1/connectors',
    {
      config: { requiredScope: 'connector:read' },
      schema: {
        tags: ['integrations'],
        summary: "List the company's connectors",
        description:
          'Metadata only: whether a key is set, its version and when it was rotated. Keys are write-only.',
        security: [{ bearer: [] }],
        response: { 200: ConnectorList, ...bearerErrorResponses },
      },
    },
    async (request) => {
      const connectors = await ctx.connectors.list(principalOf(request).companyId);
      return { connectors: connectors.map(connectorView) };
    },
  );

  app.put(
    '/integrations/v1/connectors/api-keys/:connector_id',
    {
      config: { requiredScope: 'connector:write' },
      preValidation: requireJson,
      schema: {
        tags: ['integrations'],
        summary: "Replace a connector's API key",
        description:
          'Stores the new key encrypted; the very next outbound call uses it and the previous key is never used ' +
          'again. The key is never returned. Sending the current key again changes nothing (`changed: false`, same ' +
          'version). `If-Match: "<key_version>"` makes the write conditional (412 when another rotation came first).',
        security: [{ bearer: [] }],
        params: ConnectorIdParams,
        body: RotateKeyBody,
        response: {
          200: KeyRotationView,
          ...bearerErrorResponses,
          400: Problem,
          404: Problem,
          412: Problem,
          415: Problem,
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const ifMatch = request.headers['if-match'];
      const rotation = await ctx.connectors.rotateKey(
        {
          companyId: principal.companyId,
          connectorId: request.params.connector_id,
          apiKey: request.body.api_key,
          ...(ifMatch !== undefined ? { ifMatch: ifMatchPredicate(ifMatch) } : {}),
        },
        actorOf(request, principal),
      );
      reply.header('etag', `"${rotation.keyVersion}"`).header('cache-control', 'no-store');
      return keyRotationView(rotation);
    },
  );

  // Own scope only for its lenient JSON parser (http/lenient-json.ts): a POST without a body but with a JSON content type is common.
  await app.register(async (plugin) => {
    const scope = plugin as unknown as App;
    acceptEmptyJsonBodies(scope);
    scope.post(
      '/integrations/v1/connectors/:connector_id/check',
      {
        config: { requiredScope: 'connector:read' },
        schema: {
          tags: ['integrations'],
          summary: 'Test a connector',
          description:
            'Sends `GET {connector url}` with `Authorization: Bearer {current key}` and reports the answer. A network ' +
            'failure, timeout, refused destination, unset key or unreadable stored key is reported as `ok: false`, ' +
            '`status: 0` with an error code; the request body, if any, is ignored.',
          security: [{ bearer: [] }],
          params: ConnectorIdParams,
          response: { 200: CheckView, ...bearerErrorResponses, 404: Problem },
        },
      },
      async (request) =>
        ctx.connectorCaller.check(principalOf(request).companyId, request.params.connector_id),
    );
  });
}

const actorOf = (request: FastifyRequest, principal: Principal): Actor => ({
  actor: `client:${principal.clientId}`,
  clientId: principal.clientId,
  tokenId: principal.tokenId,
  ip: request.ip,
});

/**
 * RFC 9110 §13.1.1: `If-Match: *` or a list of entity tags compared strongly (a weak `W/"…"` tag never matches);
 * our entity tag is the key version, `"3"`. An unparseable header matches nothing (412), as the RFC requires for a
 * precondition that cannot be evaluated to true.
 */
function ifMatchPredicate(header: string): (version: number) => boolean {
  if (header.trim() === '*') return () => true;
  const versions = header
    .split(',')
    .map((tag) => /^"(\d{1,15})"$/.exec(tag.trim())?.[1])
    .filter((v): v is string => v !== undefined)
    .map(Number);
  return (version) => versions.includes(version);
}
