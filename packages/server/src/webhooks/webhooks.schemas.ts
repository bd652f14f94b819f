import { Type } from '@sinclair/typebox';
import { EVENT_TYPES } from '../events/domain-events.ts';
import { CONNECTOR_URL_MAX } from '../integrations/connector-validation.ts';
import { DESCRIPTION_MAX } from './webhooks.service.ts';

export { Problem } from '../integrations/connectors.schemas.ts';

export const WebhookIdParams = Type.Object({
  id: Type.String({ description: 'Webhook id (UUID)' }),
});

export const DeliveryParams = Type.Object({
  id: Type.String({ description: 'Webhook id (UUID)' }),
  deliveryId: Type.String({ description: 'Delivery id (`dlv_…`)' }),
});

const EventTypes = Type.Array(Type.String({ examples: [EVENT_TYPES[0]] }), {
  description: `Event types to receive, any of: ${EVENT_TYPES.map((t) => `\`${t}\``).join(', ')}`,
  maxItems: 50,
});

export const CreateWebhookBody = Type.Object(
  {
    url: Type.String({ maxLength: CONNECTOR_URL_MAX, description: 'http(s) URL deliveries are POSTed to' }),
    events: EventTypes,
    description: Type.Optional(Type.Union([Type.String({ maxLength: DESCRIPTION_MAX }), Type.Null()])),
  },
  { additionalProperties: false },
);

export const WebhookView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  events: Type.Array(Type.String()),
  description: Type.Union([Type.String(), Type.Null()]),
  enabled: Type.Boolean({ description: 'False once the endpoint failed continuously for 3 days' }),
  created_at: Type.String({ format: 'date-time' }),
  disabled_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

const Secret = Type.String({
  pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
  description: 'Signing secret (`whsec_` + base64 of 32 random bytes); shown only in this answer',
});

export const CreatedWebhook = Type.Object({
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  events: Type.Array(Type.String()),
  description: Type.Union([Type.String(), Type.Null()]),
  secret: Secret,
});

export const WebhookList = Type.Object({ webhooks: Type.Array(WebhookView) });

export const RotatedSecret = Type.Object({ secret: Secret });

export const DeliveryView = Type.Object({
  id: Type.String(),
  event_id: Type.String({ description: 'The `webhook-id` header and the body `id` of every attempt' }),
  type: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attempts: Type.Integer({ minimum: 0 }),
  last_status_code: Type.Union([
    Type.Integer({ description: 'HTTP status of the last answer; 0 when none arrived' }),
    Type.Null(),
  ]),
  next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

export const DeliveryList = Type.Object({ deliveries: Type.Array(DeliveryView) });

export const DeliveriesQuery = Type.Object({
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$', description: '1–100, default 100' })),
});
