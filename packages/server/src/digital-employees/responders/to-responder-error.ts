import { AppError } from '../../errors/app-error.ts';
import type { SilenceDeadline } from './deadline.ts';
import {
  ResponderBadResponseError,
  ResponderError,
  ResponderMisconfiguredError,
  ResponderTimeoutError,
  ResponderUnreachableError,
} from './responder-errors.ts';

/**
 * Maps a failure of an outbound call to a typed responder error without carrying the original over: a network or
 * library error may quote URLs or headers, and nothing a responder throws may ever hold the connector's key.
 */
export function toResponderError(
  err: unknown,
  deadline: SilenceDeadline,
  timeoutMs?: number,
): ResponderError {
  const stopped = deadline.reason();
  if (stopped) return stopped;
  if (err instanceof ResponderError) return err;
  const connectorError = appErrorIn(err);
  if (connectorError) return fromConnectorError(connectorError, timeoutMs);
  return new ResponderUnreachableError();
}

/** The AppError itself or the nearest one in its `cause` chain (SDKs and web streams wrap what fetch threw). */
function appErrorIn(err: unknown): AppError | undefined {
  let current = err;
  for (let depth = 0; depth < 5 && current; depth++) {
    if (current instanceof AppError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The connectors capability's codes (docs/errors.md "Connectors") seen from a digital employee. */
function fromConnectorError(err: AppError, timeoutMs: number | undefined): ResponderError {
  switch (err.code) {
    case 'connector_unreachable':
      return new ResponderUnreachableError();
    case 'connector_timeout':
      return timeoutMs ? new ResponderTimeoutError(timeoutMs) : new ResponderUnreachableError();
    case 'connector_bad_response':
      return new ResponderBadResponseError('the connector call failed');
    default:
      // connector_not_found, connector_key_not_set, connector_key_unreadable, connector_destination_blocked,
      // connector_redirect_refused, connector_url_invalid: setup problems an operator has to fix.
      return new ResponderMisconfiguredError(`connector problem (${err.code})`);
  }
}
