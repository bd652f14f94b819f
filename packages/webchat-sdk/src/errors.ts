/**
 * Errors the SDK raises. Each has a stable string `code` to branch on; `message` is for people.
 *
 * Codes: `http_error` (a REST call answered with an error status; `status` and the problem `problemCode` are set),
 * `network_error` (the server could not be reached), `invalid_response` (a REST answer of an unexpected shape),
 * `not_started` (a method that needs `start()` first), `closed` (the client was closed), `send_failed` (a message
 * could not be delivered; see `ChatMessage.sendError`), `empty_message`.
 */
export class WebchatError extends Error {
  readonly code: string;
  /** HTTP status for `http_error`. */
  readonly status?: number;
  /** The RFC 9457 `code` of the server's problem body, when it sent one. */
  readonly problemCode?: string;

  constructor(
    code: string,
    message: string,
    details: { status?: number; problemCode?: string; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'WebchatError';
    this.code = code;
    if (details.status !== undefined) this.status = details.status;
    if (details.problemCode !== undefined) this.problemCode = details.problemCode;
  }
}

/** Any error thrown inside the SDK (centrifuge's included) as a {@link WebchatError}, `realtime_error` if not one. */
export function asWebchatError(err: unknown): WebchatError {
  if (err instanceof WebchatError) return err;
  const message = err instanceof Error ? err.message : String((err as { message?: unknown })?.message ?? err);
  return new WebchatError('realtime_error', message, { cause: err });
}

/** Rejects with a `timeout` {@link WebchatError} naming `what` when `promise` has not settled within `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new WebchatError('timeout', `${what} within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err) => {
        clearTimeout(timer);
        reject(asWebchatError(err));
      },
    );
  });
}
