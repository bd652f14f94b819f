import type { FastifyRequest } from 'fastify';
import { acceptEmptyJsonBodies, requireJson } from '../http/lenient-json.ts';
import type { App } from '../http/types.ts';
import { bearerErrorResponses } from '../oauth/bearer.schemas.ts';
import { principalOf } from '../oauth/principal.ts';
import {
  CreatedWebhook,
  CreateWebhookBody,
  DeliveriesQuery,
  DeliveryList,
  DeliveryParams,
  Problem,
  RotatedSecret,
  WebhookIdParams,
  WebhookList,
} from './webhooks.schemas.ts';
import { createdWebhookView, type WebhookActor, type WebhooksService } from './webhooks.service.ts';

const docs = (summary: string, description?: string) => ({
  tags: ['webhooks'],
  summary,
  ...(description ? { description } : {}),
  security: [{ bearer: [] }],
});

/**
 * Event webhooks for API clients (`/platform/v1/webhooks`, scopes `webhooks:read` / `webhooks:write`;
 * docs/webhooks.md "Endpoints"). Always the token's company: another company's webhook answers like a missing one (404).
 */
export async function registerWebhookRoutes(app: App, webhooks: WebhooksService): Promise<void> {
  const companyOf = (request: FastifyRequest) => principalOf(request).companyId;
  const actorOf = (request: FastifyRequest): WebhookActor => ({
    actor: `client:${principalOf(request).clientId}`,
    ip: request.ip,
  });

  app.post(
    '/platform/v1/webhooks',
    {
      config: { requiredScope: 'webhooks:write' },
      preValidation: requireJson,
      schema: {
        ...docs(
          'Create a webhook',
          'Answers the signing secret once; it is never shown again (rotate it to get a new one).',
        ),
        body: CreateWebhookBody,
        response: { 201: CreatedWebhook, ...bearerErrorResponses, 400: Problem, 415: Problem },
      },
    },
    async (request, reply) => {
      const created = await webhooks.create(companyOf(request), request.body, actorOf(request));
      reply.status(201).header('cache-control', 'no-store');
      return createdWebhookView(created);
    },
  );

  app.get(
    '/platform/v1/webhooks',
    {
      config: { requiredScope: 'webhooks:read' },
      schema: {
        ...docs("List the company's webhooks", 'Without secrets.'),
        response: { 200: WebhookList, ...bearerErrorResponses },
      },
    },
    async (request) => ({ webhooks: await webhooks.list(companyOf(request)) }),
  );

  app.delete(
    '/platform/v1/webhooks/:id',
    {
      config: { requiredScope: 'webhooks:write' },
      schema: {
        ...docs('Delete a webhook', 'Its pending deliveries are dropped.'),
        params: WebhookIdParams,
        response: { 204: { type: 'null' }, ...bearerErrorResponses, 404: Problem },
      },
    },
    async (request, reply) => {
      await webhooks.delete(companyOf(request), request.params.id, actorOf(request));
      return reply.status(204).send();
    },
  );

  app.get(
    '/platform/v1/webhooks/:id/deliveries',
    {
      config: { requiredScope: 'webhooks:read' },
      schema: {
        ...docs("List a webhook's deliveries", 'Newest first.'),
        params: WebhookIdParams,
        querystring: DeliveriesQuery,
        response: { 200: DeliveryList, ...bearerErrorResponses, 404: Problem },
      },
    },
    async (request) => ({
      deliveries: await webhooks.deliveries(
        companyOf(request),
        request.params.id,
        request.query.limit === undefined ? undefined : Number(request.query.limit),
      ),
    }),
  );

  // Bodiless POSTs: own scope for a lenient JSON parser (http/lenient-json.ts) (an empty body with a JSON content type is common).
  await app.register(async (plugin) => {
    const scope = plugin as unknown as App;
    acceptEmptyJsonBodies(scope);

    scope.post(
      '/platform/v1/webhooks/:id/secret',
      {
        config: { requiredScope: 'webhooks:write' },
        schema: {
          ...docs(
            "Rotate a webhook's secret",
            'Answers the new secret once. The previous secret keeps signing beside it for 24 h, so ' +
              '`webhook-signature` holds two signatures meanwhile. The request body, if any, is ignored.',
          ),
          params: WebhookIdParams,
          response: { 200: RotatedSecret, ...bearerErrorResponses, 404: Problem },
        },
      },
      async (request, reply) => {
        const secret = await webhooks.rotateSecret(companyOf(request), request.params.id, actorOf(request));
        reply.header('cache-control', 'no-store');
        return { secret };
      },
    );

    scope.post(
      '/platform/v1/webhooks/:id/deliveries/:deliveryId/retry',
      {
        config: { requiredScope: 'webhooks:write' },
        schema: {
          ...docs(
            'Retry a delivery',
            'Sends it again as soon as possible with the same `webhook-id`, whatever its status; a new 24 h ' +
              'retry window starts. The request body, if any, is ignored.',
          ),
          params: DeliveryParams,
          response: { 202: { type: 'null' }, ...bearerErrorResponses, 404: Problem, 409: Problem },
        },
      },
      async (request, reply) => {
        await webhooks.retry(companyOf(request), request.params.id, request.params.deliveryId);
        return reply.status(202).send();
      },
    );
  });
}
