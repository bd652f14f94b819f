import type { Page } from './page.ts';

/** A webhook endpoint as Settings → Webhooks lists it: never its secret. */
export interface WebhookView {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  created_at: string;
  disabled_at: string | null;
}

/** `GET /portal/api/webhooks`: a page of endpoints and the event types one may subscribe to. */
export interface WebhookListing extends Page<WebhookView> {
  event_types: readonly string[];
}

/** The 201 of `POST /portal/api/webhooks`: the endpoint and, this once, its signing secret. */
export interface CreatedWebhookView extends WebhookView {
  secret: string;
}

/** `POST /portal/api/webhooks/{id}/secret`: the new signing secret, shown once. */
export interface WebhookSecretView {
  secret: string;
}

/** One delivery of an event to an endpoint (docs/webhooks.md). */
export interface WebhookDeliveryView {
  id: string;
  event_id: string;
  type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_status_code: number | null;
  /** The next attempt while pending; null once delivered or failed. */
  next_attempt_at: string | null;
}

/** `GET /portal/api/webhooks/{id}/deliveries`, newest first. */
export interface WebhookDeliveryList {
  deliveries: WebhookDeliveryView[];
}
