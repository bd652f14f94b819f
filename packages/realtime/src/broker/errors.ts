/** Stable codes for broker failures; the engine maps them to protocol error 100 (internal, temporary). */
export type BrokerErrorCode =
  | 'broker_not_running'
  | 'broker_closed'
  | 'broker_unavailable'
  | 'broker_bad_reply';

export class BrokerError extends Error {
  readonly code: BrokerErrorCode;

  constructor(code: BrokerErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BrokerError';
    this.code = code;
  }
}
