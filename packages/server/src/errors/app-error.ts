import type { ErrorCode } from './codes.ts';

/**
 * Base of every error the server reports to a caller on purpose. `code` is stable (listed in docs/errors.md),
 * `status` is the HTTP status, `detail` is safe to show. Anything that is not an AppError is an internal error:
 * logged with its stack and answered as a bare 500 `internal_error` problem, never with its message.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    readonly detail: string,
    /** Extension members for the problem body (RFC 9457 §3.2), e.g. `errors` for field validation. */
    readonly extensions: Record<string, unknown> = {},
    /** Extra response headers, e.g. Retry-After on 429 (RFC 6585 §4). */
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = new.target.name;
  }
}

export class BadRequestError extends AppError {
  constructor(code: ErrorCode, detail: string, extensions: Record<string, unknown> = {}) {
    super(400, code, detail, extensions);
  }
}

export class NotFoundError extends AppError {
  constructor(code: ErrorCode, detail: string) {
    super(404, code, detail);
  }
}

export class ConflictError extends AppError {
  constructor(code: ErrorCode, detail: string) {
    super(409, code, detail);
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(expected: string) {
    super(415, 'unsupported_media_type', `The request body must be ${expected}.`);
  }
}

export class TooManyRequestsError extends AppError {
  constructor(retryAfterSeconds: number, detail = 'Too many requests; retry later.') {
    super(
      429,
      'rate_limited',
      detail,
      { retry_after: retryAfterSeconds },
      { 'retry-after': String(retryAfterSeconds) },
    );
  }
}
