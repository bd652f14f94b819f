import type { ErrorBlockCode } from '../../errors/codes.ts';
/**
 * Why a responder produced no (complete) reply. `code` is stable (docs/errors.md "Digital employees"), `message` is
 * safe to log and to show: it never holds the connector's API key, the request body or the bot's response body.
 */
/** The responder failures that end a reply with an error block of that code (errors/codes.ts ERROR_BLOCK_CODES). */
export type ResponderErrorCode = Extract<
  ErrorBlockCode,
  | 'responder_timeout'
  | 'responder_http_error'
  | 'responder_bad_response'
  | 'responder_unreachable'
  | 'responder_misconfigured'
  | 'responder_aborted'
>;

export class ResponderError extends Error {
  constructor(
    readonly code: ResponderErrorCode,
    message: string,
    /** The bot's HTTP status, for `responder_http_error`. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ResponderError';
  }
}

export class ResponderTimeoutError extends ResponderError {
  constructor(timeoutMs: number) {
    super('responder_timeout', `The digital employee did not answer within ${timeoutMs} ms.`);
  }
}

export class ResponderHttpError extends ResponderError {
  constructor(status: number) {
    super('responder_http_error', `The digital employee's endpoint answered HTTP ${status}.`, status);
  }
}

export class ResponderBadResponseError extends ResponderError {
  constructor(reason: string) {
    super('responder_bad_response', `The digital employee's endpoint sent an unusable answer: ${reason}.`);
  }
}

export class ResponderUnreachableError extends ResponderError {
  constructor() {
    super('responder_unreachable', "The digital employee's endpoint could not be reached.");
  }
}

export class ResponderMisconfiguredError extends ResponderError {
  constructor(reason: string) {
    super('responder_misconfigured', `The digital employee is not configured correctly: ${reason}.`);
  }
}

/** The caller aborted (its `signal` fired), e.g. an agent took the conversation over mid-reply. */
export class ResponderAbortedError extends ResponderError {
  constructor() {
    super('responder_aborted', 'The reply was cancelled.');
  }
}
