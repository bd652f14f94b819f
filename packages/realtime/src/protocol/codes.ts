/**
 * Every code the engine puts on the wire, with Centrifugo's messages (protocol brief §3; Centrifuge `errors.go`,
 * `disconnect.go`, `unsubscribe.go`). The JS client decides whether to retry, refresh or stop from these numbers
 * alone, so they must never drift from the reference.
 */

/** Reply error codes (brief §3.1). Applications use 400–1999; 0–399 are reserved. */
export const ErrorCode = {
  internal: 100,
  unauthorized: 101,
  unknownChannel: 102,
  permissionDenied: 103,
  methodNotFound: 104,
  alreadySubscribed: 105,
  limitExceeded: 106,
  badRequest: 107,
  notAvailable: 108,
  tokenExpired: 109,
  expired: 110,
  tooManyRequests: 111,
  unrecoverablePosition: 112,
  concurrentPagination: 113,
} as const;
export type ErrorCodeName = keyof typeof ErrorCode;

export const ERROR_MESSAGES: Readonly<Record<number, string>> = {
  100: 'internal server error',
  101: 'unauthorized',
  102: 'unknown channel',
  103: 'permission denied',
  104: 'method not found',
  105: 'already subscribed',
  106: 'limit exceeded',
  107: 'bad request',
  108: 'not available',
  109: 'token expired',
  110: 'expired',
  111: 'too many requests',
  112: 'unrecoverable position',
  113: 'concurrent pagination',
};

/** Only these are marked `temporary`; the client retries them instead of giving up (brief §3.1, §3.2). */
export const TEMPORARY_ERROR_CODES: ReadonlySet<number> = new Set([100, 111, 113]);

/**
 * Disconnect (WebSocket close) codes (brief §3.3). 3000–3499 and 4000–4499 make the client reconnect;
 * 3500–3999 and 4500–4999 are terminal.
 */
export const DisconnectCode = {
  connectionClosed: 3000,
  shutdown: 3001,
  serverError: 3004,
  expired: 3005,
  subExpired: 3006,
  slow: 3008,
  writeError: 3009,
  insufficientState: 3010,
  forceReconnect: 3011,
  noPong: 3012,
  tooManyRequests: 3013,
  stateInvalidated: 3014,
  invalidToken: 3500,
  badRequest: 3501,
  stale: 3502,
  forceNoReconnect: 3503,
  connectionLimit: 3504,
  channelLimit: 3505,
  inappropriateProtocol: 3506,
  permissionDenied: 3507,
  notAvailable: 3508,
  tooManyErrors: 3509,
} as const;
export type DisconnectCodeName = keyof typeof DisconnectCode;

export const DISCONNECT_REASONS: Readonly<Record<number, string>> = {
  3000: 'connection closed',
  3001: 'shutdown',
  3004: 'internal server error',
  3005: 'connection expired',
  3006: 'subscription expired',
  3008: 'slow',
  3009: 'write error',
  3010: 'insufficient state',
  3011: 'force reconnect',
  3012: 'no pong',
  3013: 'too many requests',
  3014: 'state invalidated',
  3500: 'invalid token',
  3501: 'bad request',
  3502: 'stale',
  3503: 'force disconnect',
  3504: 'connection limit',
  3505: 'channel limit',
  3506: 'inappropriate protocol',
  3507: 'permission denied',
  3508: 'not available',
  3509: 'too many errors',
};

/** The standard reason of a disconnect code; application codes without one get "disconnect". */
export function disconnectReason(code: number): string {
  return DISCONNECT_REASONS[code] ?? 'disconnect';
}

/** Close code the JS client maps to "message size limit" and does not reconnect after (brief §1.1, §3.3). */
export const CLOSE_MESSAGE_TOO_BIG = 1009;

/** Unsubscribe push codes (brief §3.4): below 2500 the subscription ends, from 2500 the client resubscribes. */
export const UnsubscribeCode = {
  client: 0,
  disconnect: 1,
  server: 2000,
  insufficientState: 2500,
  expired: 2501,
  stateInvalidated: 2502,
} as const;

export const UNSUBSCRIBE_REASONS: Readonly<Record<number, string>> = {
  0: 'client unsubscribed',
  1: 'client disconnected',
  2000: 'server unsubscribe',
  2500: 'insufficient state',
  2501: 'subscription expired',
  2502: 'state invalidated',
};

/** The standard reason of an unsubscribe code; application codes without one get "server unsubscribe". */
export function unsubscribeReason(code: number): string {
  return UNSUBSCRIBE_REASONS[code] ?? 'server unsubscribe';
}

/** Whether the JS client stops reconnecting after this close or disconnect code (brief §3.3 "JS rule"). */
export function isTerminalDisconnect(code: number): boolean {
  return (code >= 3500 && code <= 3999) || (code >= 4500 && code <= 4999);
}
