import type {
  ApiClientListing,
  ApiClientQuotasAnswer,
  ApiClientSecretList,
  CreatedApiClientView,
} from '@parley/wire-types';
import { Type } from '@sinclair/typebox';
import { PageQuery, pageOf } from '../http/offset-page.ts';
import type { App } from '../http/types.ts';
import { actorOf, sessionOf } from '../users/portal-session.ts';
import {
  apiClientView,
  MAX_OLD_SECRET_LIFETIME_SECONDS,
  MAX_QUOTA_PER_MINUTE,
  quotaView,
} from './api-clients.service.ts';
import type { OAuthServices } from './oauth.services.ts';
import { SCOPES } from './principal.ts';

const CreateClient = Type.Object(
  {
    name: Type.String({ maxLength: 1000 }),
    scopes: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 20 }),
    /** DPoP (RFC 9449, docs/machine-access.md): `required` refuses token requests without a proof. */
    dpop: Type.Optional(Type.Union([Type.Literal('optional'), Type.Literal('required')])),
  },
  { additionalProperties: false },
);
const ClientIdParams = Type.Object({ clientId: Type.String({ maxLength: 200 }) });
const SecretParams = Type.Object({
  clientId: Type.String({ maxLength: 200 }),
  secretId: Type.String({ maxLength: 200 }),
});
const RotateSecret = Type.Object(
  {
    /** How long the secrets in use keep working; default 7 days, at most 90 (0: stop at once). */
    old_expires_in_seconds: Type.Optional(
      Type.Integer({ minimum: 0, maximum: MAX_OLD_SECRET_LIFETIME_SECONDS }),
    ),
  },
  { additionalProperties: false },
);

const QuotaValue = Type.Union([Type.Integer({ minimum: 1, maximum: MAX_QUOTA_PER_MINUTE }), Type.Null()], {
  description: 'Requests per minute; null: the deployment default.',
});
const SetQuotas = Type.Object(
  {
    tokens_per_minute: Type.Optional(QuotaValue),
    api_calls_per_minute: Type.Optional(QuotaValue),
  },
  { additionalProperties: false },
);

/**
 * Settings → API clients, over the OAuth capability's ApiClientsService (it validates, stores only a digest of
 * the secret and writes the audit events). The secret appears in exactly one response: the 201 of the creation.
 */
export function registerApiClientRoutes(app: App, oauth: Pick<OAuthServices, 'clients' | 'quotas'>): void {
  const clients = () => oauth.clients;

  app.get(
    '/api-clients',
    { schema: { querystring: PageQuery } },
    async (request): Promise<ApiClientListing> => ({
      ...pageOf((await clients().list(sessionOf(request).user.companyId)).map(apiClientView), request.query),
      available_scopes: SCOPES,
    }),
  );

  app.post('/api-clients', { schema: { body: CreateClient } }, async (request, reply) => {
    const { client, secret } = await clients().create({
      companyId: sessionOf(request).user.companyId,
      name: request.body.name,
      scopes: request.body.scopes,
      dpop: request.body.dpop,
      actor: actorOf(request),
    });
    return reply
      .status(201)
      .send({ ...apiClientView(client), client_secret: secret } satisfies CreatedApiClientView);
  });

  // Rotation with overlap (docs/machine-access.md): the new secret is in this one 201 only.
  app.post(
    '/api-clients/:clientId/secrets',
    { schema: { params: ClientIdParams, body: Type.Optional(RotateSecret) } },
    async (request, reply) => {
      const rotated = await clients().rotateSecret({
        companyId: sessionOf(request).user.companyId,
        clientId: request.params.clientId,
        oldExpiresInSeconds: request.body?.old_expires_in_seconds,
        actor: actorOf(request),
      });
      return reply.status(201).send(rotated);
    },
  );

  app.get(
    '/api-clients/:clientId/secrets',
    { schema: { params: ClientIdParams } },
    async (request): Promise<ApiClientSecretList> => ({
      secrets: await clients().listSecrets(sessionOf(request).user.companyId, request.params.clientId),
    }),
  );

  app.delete(
    '/api-clients/:clientId/secrets/:secretId',
    { schema: { params: SecretParams } },
    async (request, reply) => {
      await clients().revokeSecret({
        companyId: sessionOf(request).user.companyId,
        clientId: request.params.clientId,
        secretId: request.params.secretId,
        actor: actorOf(request),
      });
      return reply.status(204).send();
    },
  );

  // Per-client quotas (docs/machine-access.md "Quotas"): a key left out keeps its value, null restores the default.
  app.put(
    '/api-clients/:clientId/quotas',
    { schema: { params: ClientIdParams, body: SetQuotas } },
    async (request): Promise<ApiClientQuotasAnswer> => {
      const quotas = await oauth.quotas.set({
        companyId: sessionOf(request).user.companyId,
        clientId: request.params.clientId,
        quotas: {
          tokensPerMinute: request.body.tokens_per_minute,
          apiCallsPerMinute: request.body.api_calls_per_minute,
        },
        actor: actorOf(request),
      });
      return { client_id: request.params.clientId, quotas: quotaView(quotas) };
    },
  );

  app.delete('/api-clients/:clientId', { schema: { params: ClientIdParams } }, async (request, reply) => {
    await clients().delete(sessionOf(request).user.companyId, request.params.clientId, actorOf(request));
    return reply.status(204).send();
  });
}
