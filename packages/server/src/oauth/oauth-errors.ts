import type { FastifyReply } from 'fastify';
import { AppError } from '../errors/app-error.ts';
import type { ErrorCode } from '../errors/codes.ts';

/**
 * Error codes of the token endpoint: RFC 6749 §5.2, plus `slow_down` (registered for the token endpoint by
 * RFC 8628 §3.5 in the IANA "OAuth Extensions Error" registry) for 429 answers, `temporarily_unavailable`
 * (RFC 6749 §4.1.2.1's code for an overloaded or unavailable server) for 503 while the store is down, and
 * `server_error` for 500.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'slow_down'
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  | 'temporarily_unavailable'
  | 'server_error';

/** `realm` of every HTTP authentication challenge Parley sends (Basic here, Bearer on the API). */
export const REALM = 'parley';

/**
 * An error answered at the token endpoint as RFC 6749 §5.2 JSON `{error, error_description}` (not problem+json:
 * the OAuth format is normative there). A kind of AppError whose stable code is the RFC's `error`. Descriptions are
 * fixed, generic texts: RFC 6749 limits them to printable ASCII without `"` and `\`, and for authentication
 * failures they must not tell which part was wrong.
 */
export class OAuthError extends AppError {
  constructor(
    readonly error: OAuthErrorCode,
    description: string,
    status = 400,
    headers: Record<string, string> = {},
    /** Parley's own code when it says more than `error` (e.g. store_unavailable), sent as an extra member. */
    reason?: ErrorCode,
  ) {
    if (!/^[\x20\x21\x23-\x5b\x5d-\x7e]*$/.test(description))
      throw new Error('invalid error_description characters');
    super(status, error, description, reason ? { code: reason } : {}, headers);
  }

  get description(): string {
    return this.detail;
  }
}

export const invalidRequest = (description: string): OAuthError =>
  new OAuthError('invalid_request', description);

/** RFC 6749 §5.2: 401 with a Basic challenge; one description for every cause, so nothing leaks. */
export const invalidClient = (): OAuthError =>
  new OAuthError('invalid_client', 'Client authentication failed.', 401, {
    'www-authenticate': `Basic realm="${REALM}"`,
  });

/** 429; `headers` adds e.g. the quota's `RateLimit` fields, `reason` the Parley code (client_quota_exceeded). */
export const slowDown = (
  retryAfterSeconds: number,
  headers: Record<string, string> = {},
  reason?: ErrorCode,
): OAuthError =>
  new OAuthError(
    'slow_down',
    `Too many requests; retry after ${retryAfterSeconds} seconds.`,
    429,
    { ...headers, 'retry-after': String(retryAfterSeconds) },
    reason,
  );

/** 503 while a dependency is down; `code` names which one, as the problem+json boundary does. */
export const temporarilyUnavailable = (code: ErrorCode, retryAfterSeconds: number): OAuthError =>
  new OAuthError(
    'temporarily_unavailable',
    'The service is temporarily unavailable; retry shortly.',
    503,
    { 'retry-after': String(retryAfterSeconds) },
    code,
  );

export function sendOAuthError(reply: FastifyReply, err: OAuthError): FastifyReply {
  for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
  // RFC 6749 §5.1 asks for these on token responses; errors get them too so no cache keeps any answer.
  return reply
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .status(err.status)
    .type('application/json')
    .send({ error: err.error, error_description: err.description, ...err.extensions });
}
