import type {
  CreatedWebhookView,
  WebhookDeliveryList,
  WebhookListing,
  WebhookSecretView,
} from '@parley/wire-types';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { EVENT_TYPES } from '../events/domain-events.ts';
import { PageQuery, pageOf } from '../http/offset-page.ts';
import type { App } from '../http/types.ts';
import { actorOf, companyOf } from '../users/portal-session.ts';
import type { WebhookActor, WebhooksService } from './webhooks.service.ts';

// Rules are checked by the webhooks service (its codes and messages); these bounds only stop absurd bodies.
const CreateWebhook = Type.Object(
  {
    url: Type.String({ maxLength: 4096 }),
    events: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50 }),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
);
const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
const DeliveryParams = Type.Object({
  id: Type.String({ maxLength: 100 }),
  deliveryId: Type.String({ maxLength: 100 }),
});

const actor = (request: FastifyRequest): WebhookActor => ({ actor: actorOf(request), ip: request.ip });

/**
 * Settings → Webhooks, over the webhooks capability (the same service as `/platform/v1/webhooks` and the CLI): the
 * secret travels outward only in the answers of create and rotate, once.
 */
export function registerWebhookPortalRoutes(app: App, webhooks: WebhooksService): void {
  app.get(
    '/webhooks',
    { schema: { querystring: PageQuery } },
    async (request): Promise<WebhookListing> => ({
      ...pageOf(await webhooks.list(companyOf(request)), request.query),
      event_types: EVENT_TYPES,
    }),
  );

  app.post('/webhooks', { schema: { body: CreateWebhook } }, async (request, reply) => {
    const { webhook, secret } = await webhooks.create(companyOf(request), request.body, actor(request));
    return reply
      .status(201)
      .header('cache-control', 'no-store')
      .send({ ...webhook, secret } satisfies CreatedWebhookView);
  });

  app.delete('/webhooks/:id', { schema: { params: IdParams } }, async (request, reply) => {
    await webhooks.delete(companyOf(request), request.params.id, actor(request));
    return reply.status(204).send();
  });

  app.post('/webhooks/:id/secret', { schema: { params: IdParams } }, async (request, reply) => {
    const secret = await webhooks.rotateSecret(companyOf(request), request.params.id, actor(request));
    return reply.header('cache-control', 'no-store').send({ secret } satisfies WebhookSecretView);
  });

  app.get(
    '/webhooks/:id/deliveries',
    { schema: { params: IdParams } },
    async (request): Promise<WebhookDeliveryList> => ({
      deliveries: await webhooks.deliveries(companyOf(request), request.params.id),
    }),
  );

  app.post(
    '/webhooks/:id/deliveries/:deliveryId/retry',
    { schema: { params: DeliveryParams } },
    async (request, reply) => {
      await webhooks.retry(companyOf(request), request.params.id, request.params.deliveryId);
      return reply.status(202).send();
    },
  );
}
