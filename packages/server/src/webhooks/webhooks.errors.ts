import { BadRequestError, ConflictError, NotFoundError } from '../errors/app-error.ts';

/** Errors of the webhooks capability; codes are listed in docs/errors.md ("Webhooks"). None carries a secret. */

/** A malformed id, a missing endpoint and another company's endpoint look the same (no existence oracle). */
export class WebhookNotFoundError extends NotFoundError {
  constructor() {
    super('webhook_not_found', 'No such webhook.');
  }
}

export class DeliveryNotFoundError extends NotFoundError {
  constructor() {
    super('webhook_delivery_not_found', 'No such delivery of this webhook.');
  }
}

export class InvalidWebhookError extends BadRequestError {
  constructor(
    code: 'invalid_events' | 'invalid_description' | 'invalid_url',
    field: string,
    message: string,
  ) {
    super(code, `${field} ${message}.`, { errors: [{ field, message }] });
  }
}

/** The endpoint failed for 3 days and was disabled: nothing is sent to it any more. */
export class WebhookDisabledError extends ConflictError {
  constructor() {
    super('webhook_disabled', 'The webhook was disabled after failing for 3 days; create a new one.');
  }
}
