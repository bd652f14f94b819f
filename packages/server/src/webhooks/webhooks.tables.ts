import type { Generated } from 'kysely';

/**
 * Tables of the webhooks capability (migration 050_webhooks). Times the dispatcher compares across nodes
 * (`*_ms`, `next_attempt_at`) are milliseconds since the epoch on the database's clock (storage/db-clock.ts).
 */
export interface WebhookEndpointsTable {
  id: string;
  company_id: string;
  url: string;
  /** JSON array of the subscribed event types (events.ts `EVENT_TYPES`). */
  events: string;
  description: string | null;
  /** Sealed `whsec_…` secret (crypto/sealing.ts); associated data binds company, endpoint and `secret_version`. */
  secret_sealed: string;
  /** The secret before the last rotation, sealed under `secret_version - 1`; signs beside the new one for 24 h. */
  previous_secret_sealed: string | null;
  previous_secret_expires_ms: number | null;
  /** 1 at creation, +1 on every rotation. */
  secret_version: number;
  /** 0 once the endpoint failed continuously for 3 days (dispatcher.ts); nothing more is sent to it. */
  enabled: number;
  /** When the endpoint's current run of failed attempts began; null while it answers. */
  failing_since_ms: number | null;
  created_at: string;
  disabled_at: string | null;
}

/** The outbox: one row per event, written in the transaction of the change it reports (outbox.ts). */
export interface WebhookEventsTable {
  /** `msg_…`: the body's `id` and the `webhook-id` header of every attempt of every delivery. */
  id: string;
  company_id: string;
  type: string;
  /** The exact JSON body every attempt sends (signed byte for byte). */
  body: string;
  created_ms: number;
  /** The conversation the event is about, null for others (migration 130): what an erasure deletes by. */
  conversation_id: Generated<string | null>;
}

export interface WebhookDeliveriesTable {
  id: string;
  endpoint_id: string;
  event_id: string;
  company_id: string;
  type: string;
  /** `pending`, `delivered` or `failed` (the contract's delivery status). */
  status: string;
  attempts: number;
  /** Status of the last answer; 0 when none arrived (network failure, timeout). Null before the first attempt. */
  last_status_code: number | null;
  /** When the delivery may next be claimed: due time while waiting, lease end while a node sends it. */
  next_attempt_at: number | null;
  /** The node sending it now (its lease runs until `next_attempt_at`). */
  lease_owner: string | null;
  /** Start of the ≥ 24 h retry window: creation, or a manual retry. */
  window_start_ms: number;
  created_ms: number;
}

export interface WebhooksTables {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
}

// This capability's tables join the one database type (storage/schema.ts) from here, so the store knows no feature.
declare module '../storage/schema.ts' {
  interface Database extends WebhooksTables {}
}
