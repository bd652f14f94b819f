import { BrokerError } from '@parley/realtime';
import { isStoreUnavailable } from '../storage/store-errors.ts';
import { AppError } from './app-error.ts';

/** Seconds a client is asked to wait before retrying while a dependency is down (RFC 9110 §10.2.3). */
export const RETRY_AFTER_SECONDS = 2;

/** ioredis' own errors while it has no connection: no code, only these messages. */
const REDIS_DOWN_MESSAGES = [
  'Connection is closed',
  "Stream isn't writeable",
  'Command timed out',
  'Reached the max retries per request limit',
  'connect ECONNREFUSED',
];

/** A dependency is down: 503, with the wait before a retry as the `retry_after` member and the Retry-After header. */
const unavailable = (code: 'store_unavailable' | 'broker_unavailable', detail: string): AppError =>
  new AppError(
    503,
    code,
    detail,
    { retry_after: RETRY_AFTER_SECONDS },
    { 'retry-after': String(RETRY_AFTER_SECONDS) },
  );

function isBrokerUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    if (e instanceof BrokerError) return e.code !== 'broker_bad_reply';
    const { name, message } = e as { name?: unknown; message?: unknown };
    if (name === 'MaxRetriesPerRequestError') return true;
    if (typeof message === 'string' && REDIS_DOWN_MESSAGES.some((m) => message.includes(m))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * The one place that tells a dependency outage from a bug: every boundary (problem+json, the token endpoint,
 * realtime publish replies) answers these as "temporarily unavailable, retry" instead of an internal error.
 */
export function dependencyUnavailable(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error.status === 503 ? error : undefined;
  // The store (SQLite or PostgreSQL) or the broker (Redis) cannot be reached right now.
  if (isStoreUnavailable(error))
    return unavailable('store_unavailable', 'The database is unavailable right now; retry shortly.');
  if (isBrokerUnavailable(error))
    return unavailable('broker_unavailable', 'The message broker is unavailable right now; retry shortly.');
  return undefined;
}
