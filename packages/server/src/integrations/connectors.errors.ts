import { AppError, BadRequestError, NotFoundError } from '../errors/app-error.ts';
import type { ErrorCode } from '../errors/codes.ts';

/**
 * Errors of the connectors capability. Codes are stable and listed in docs/errors.md ("Connectors"). None of them
 * ever carries a key: messages name fields, ids and hosts only.
 */

/** A malformed id, a missing connector and another company's connector all look the same (no existence oracle). */
export class ConnectorNotFoundError extends NotFoundError {
  constructor() {
    super('connector_not_found', 'No such connector.');
  }
}

export type ConnectorField = 'name' | 'type' | 'url' | 'api_key';

export class InvalidConnectorError extends BadRequestError {
  constructor(
    code: 'invalid_name' | 'invalid_type' | 'invalid_url' | 'invalid_api_key',
    field: ConnectorField,
    message: string,
  ) {
    super(code, `${field} ${message}.`, { errors: [{ field, message }] });
  }
}

/** `If-Match` named a key version that is no longer current (RFC 9110 §13.1.1). */
export class KeyVersionMismatchError extends AppError {
  constructor(currentVersion: number) {
    super(412, 'precondition_failed', 'The connector key was changed since the version given in If-Match.', {
      key_version: currentVersion,
    });
  }
}

/** A call needs the connector's key, but none was ever set. */
export class ConnectorKeyNotSetError extends AppError {
  constructor() {
    super(409, 'connector_key_not_set', 'The connector has no API key; set one first.');
  }
}

/**
 * The stored key failed its integrity check: the ciphertext was altered or moved from another row, or its master
 * key version is no longer configured. Setting a new key repairs the connector.
 */
export class ConnectorKeyUnreadableError extends AppError {
  constructor() {
    super(
      500,
      'connector_key_unreadable',
      'The stored connector key failed its integrity check; set a new key.',
    );
  }
}

/** Rotations of one connector kept colliding past the retry budget (only under extreme contention). */
export class RotationConflictError extends AppError {
  constructor() {
    super(409, 'rotation_conflict', 'The connector key is being changed concurrently; retry.');
  }
}

export type OutboundErrorCode = Extract<
  ErrorCode,
  | 'connector_unreachable'
  | 'connector_timeout'
  | 'connector_destination_blocked'
  | 'connector_redirect_refused'
  | 'connector_bad_response'
  | 'connector_url_invalid'
>;

const OUTBOUND_STATUS: Record<OutboundErrorCode, number> = {
  connector_unreachable: 502,
  connector_timeout: 504,
  connector_destination_blocked: 502,
  connector_redirect_refused: 502,
  connector_bad_response: 502,
  connector_url_invalid: 500,
};

/**
 * An outbound call failed before a usable response arrived. Built from scratch (never wrapping the underlying
 * error) so no header, and so no key, can travel inside it.
 */
export class OutboundError extends AppError {
  constructor(
    override readonly code: OutboundErrorCode,
    detail: string,
  ) {
    super(OUTBOUND_STATUS[code], code, detail);
  }
}
