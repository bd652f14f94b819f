import { Type } from '@sinclair/typebox';

export { Problem } from '../integrations/connectors.schemas.ts';

/** Exactly one selector (checked by the service: 400 `invalid_privacy_selector` otherwise). */
export const PrivacySelectorBody = Type.Object(
  {
    visitor_sub: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: "The integrator's user id (the visitor token's `sub`).",
      }),
    ),
    conversation_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    session_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'A visitor session (`X-Session-Id`).' }),
    ),
  },
  { additionalProperties: false },
);

const count = Type.Integer({ minimum: 0 });

export const ErasureReceipt = Type.Object({
  id: Type.String(),
  erased_at: Type.String({ format: 'date-time' }),
  erased: Type.Object({
    conversations: count,
    messages: count,
    attachments: count,
    attachment_blobs: count,
    webhook_deliveries: count,
    webhook_events: count,
    read_marks: count,
    feedback: count,
    csat: count,
    idempotency_keys: count,
    realtime_histories: count,
  }),
});

/** Retention periods in days; `null` keeps for ever (docs/privacy.md "Retention"). */
export const RetentionSettings = Type.Object(
  {
    resolved_conversation_days: Type.Union([Type.Integer({ minimum: 1, maximum: 36500 }), Type.Null()]),
    delivered_webhook_days: Type.Union([Type.Integer({ minimum: 1, maximum: 36500 }), Type.Null()]),
    audit_days: Type.Union([Type.Integer({ minimum: 1, maximum: 36500 }), Type.Null()]),
  },
  { additionalProperties: false },
);
