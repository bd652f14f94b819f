import { BrokerError } from '../broker/errors.ts';
import {
  disconnectReason,
  ERROR_MESSAGES,
  ErrorCode,
  TEMPORARY_ERROR_CODES,
  UNAVAILABLE_ERROR_CODE,
} from './codes.ts';

/**
 * A reply error sent to the client (`{"error":{code,message,temporary}}`). Throw it from hooks to reject a
 * command: applications use codes 400–1999 (docs/protocol.md "Reply error codes") or one of the standard
 * codes in `ErrorCode`. The stable string `code` names the class; `protocolCode` is the number on the wire.
 */
export class ClientError extends Error {
  readonly code = 'realtime_client_error' as const;
  readonly protocolCode: number;
  readonly temporary: boolean;

  constructor(protocolCode: number, message?: string, options?: { temporary?: boolean; cause?: unknown }) {
    super(message ?? ERROR_MESSAGES.get(protocolCode) ?? 'error', { cause: options?.cause });
    this.name = 'ClientError';
    this.protocolCode = protocolCode;
    this.temporary = options?.temporary ?? TEMPORARY_ERROR_CODES.has(protocolCode);
  }
}

/**
 * Closes the connection with a WebSocket close code and reason. Throw it from hooks to drop the client:
 * applications use 4000–4499 (client reconnects) or 4500–4999 (terminal),
 * docs/protocol.md "Disconnect codes".
 */
export class DisconnectError extends Error {
  readonly code = 'realtime_disconnect' as const;
  readonly protocolCode: number;
  readonly reason: string;

  constructor(protocolCode: number, reason?: string) {
    const text = reason ?? disconnectReason(protocolCode);
    super(text);
    this.name = 'DisconnectError';
    this.protocolCode = protocolCode;
    this.reason = text;
  }
}

/**
 * Whatever a handler threw, as the reply error the client sees: a broker that cannot be reached (down,
 * reconnecting, not started, already closed) becomes 503 temporary (see `UNAVAILABLE_ERROR_CODE`); other unknown
 * failures become 100 (LIB `toClientErr`).
 */
export function toClientError(error: unknown): ClientError {
  if (error instanceof ClientError) return error;
  if (isBrokerUnavailable(error)) {
    return new ClientError(UNAVAILABLE_ERROR_CODE, 'broker unavailable', { cause: error });
  }
  return new ClientError(ErrorCode.internal, undefined, { cause: error });
}

/** A broker failure that says nothing about the request itself: retrying later can succeed. */
export function isBrokerUnavailable(error: unknown): error is BrokerError {
  return error instanceof BrokerError && error.code !== 'broker_bad_reply';
}
