/**
 * Every code the engine puts on the wire, with Centrifugo's messages (docs/protocol.md "Reply error codes",
 * "Disconnect codes", "Unsubscribe codes"; LIB `errors.go`, `disconnect.go`, `unsubscribe.go`). The JS client
 * decides whether to retry, refresh or stop from these numbers alone, so they must never drift from the
 * reference.
 */

/** A table of `name: [code, message]` rows, as Centrifugo lists them: one row per code, so the two never drift. */
type CodeRows = Readonly<Record<string, readonly [number, string]>>;

/** `{ name: code }` of a table. */
function codesOf<T extends CodeRows>(rows: T): { readonly [K in keyof T]: T[K][0] } {
  return Object.fromEntries(Object.entries(rows).map(([name, [code]]) => [name, code])) as {
    readonly [K in keyof T]: T[K][0];
  };
}

/** code → message of a table, and of any codes that have a message but no name. */
function messagesOf(rows: CodeRows, ...more: Array<readonly [number, string]>): ReadonlyMap<number, string> {
  return new Map([...Object.values(rows), ...more]);
}

/**
 * Reply error codes (docs/protocol.md "Reply error codes"). Applications use 400–1999; 0–399 are reserved.
 */
const ERROR_ROWS = {
  internal: [100, 'internal server error'],
  unauthorized: [101, 'unauthorized'],
  unknownChannel: [102, 'unknown channel'],
  permissionDenied: [103, 'permission denied'],
  methodNotFound: [104, 'method not found'],
  alreadySubscribed: [105, 'already subscribed'],
  limitExceeded: [106, 'limit exceeded'],
  badRequest: [107, 'bad request'],
  notAvailable: [108, 'not available'],
  tokenExpired: [109, 'token expired'],
  expired: [110, 'expired'],
  tooManyRequests: [111, 'too many requests'],
  unrecoverablePosition: [112, 'unrecoverable position'],
  concurrentPagination: [113, 'concurrent pagination'],
} as const;
export const ErrorCode = codesOf(ERROR_ROWS);
export type ErrorCodeName = keyof typeof ErrorCode;

/**
 * Not a Centrifugo code: a command that needs the broker (or, in an application hook, the application's own
 * store) while it cannot be reached is answered 503 "service unavailable", marked temporary. It lies in the
 * application range (400–1999) so the standard codes keep their meaning; being temporary, the client retries
 * it (docs/protocol.md "Reply error codes") instead of treating it as final, and a publish fails at once
 * instead of hanging until the client's timeout.
 */
export const UNAVAILABLE_ERROR_CODE = 503;

/**
 * Not a Centrifugo code either: a command whose JSON nests deeper than `MAX_JSON_DEPTH` (protocol/json-depth.ts)
 * is answered 400 "json too deep" before anything reads its data — Centrifugo keeps `data` as raw bytes and never
 * walks it, this engine parses it. In the application range like 503, and final: the same command fails again.
 */
export const JSON_TOO_DEEP_ERROR_CODE = 400;

export const ERROR_MESSAGES: ReadonlyMap<number, string> = messagesOf(ERROR_ROWS, [
  UNAVAILABLE_ERROR_CODE,
  'service unavailable',
]);

/**
 * Only these are marked `temporary`; the client retries them instead of giving up
 * (docs/protocol.md "Reply error codes"). Centrifugo marks 100, 111 and 113; 503 is ours (see
 * `UNAVAILABLE_ERROR_CODE`).
 */
export const TEMPORARY_ERROR_CODES: ReadonlySet<number> = new Set([100, 111, 113, UNAVAILABLE_ERROR_CODE]);

/**
 * Disconnect (WebSocket close) codes (docs/protocol.md "Disconnect codes"). 3000–3499 and 4000–4499 make the
 * client reconnect; 3500–3999 and 4500–4999 are terminal.
 */
const DISCONNECT_ROWS = {
  connectionClosed: [3000, 'connection closed'],
  shutdown: [3001, 'shutdown'],
  serverError: [3004, 'internal server error'],
  expired: [3005, 'connection expired'],
  subExpired: [3006, 'subscription expired'],
  slow: [3008, 'slow'],
  writeError: [3009, 'write error'],
  insufficientState: [3010, 'insufficient state'],
  forceReconnect: [3011, 'force reconnect'],
  noPong: [3012, 'no pong'],
  tooManyRequests: [3013, 'too many requests'],
  stateInvalidated: [3014, 'state invalidated'],
  invalidToken: [3500, 'invalid token'],
  badRequest: [3501, 'bad request'],
  stale: [3502, 'stale'],
  forceNoReconnect: [3503, 'force disconnect'],
  connectionLimit: [3504, 'connection limit'],
  channelLimit: [3505, 'channel limit'],
  inappropriateProtocol: [3506, 'inappropriate protocol'],
  permissionDenied: [3507, 'permission denied'],
  notAvailable: [3508, 'not available'],
  tooManyErrors: [3509, 'too many errors'],
} as const;
export const DisconnectCode = codesOf(DISCONNECT_ROWS);
export type DisconnectCodeName = keyof typeof DisconnectCode;

export const DISCONNECT_REASONS: ReadonlyMap<number, string> = messagesOf(DISCONNECT_ROWS);

/** The standard reason of a disconnect code; application codes without one get "disconnect". */
export function disconnectReason(code: number): string {
  return DISCONNECT_REASONS.get(code) ?? 'disconnect';
}

/**
 * Close code the JS client maps to "message size limit" and does not reconnect after
 * (docs/protocol.md "Transport").
 */
export const CLOSE_MESSAGE_TOO_BIG = 1009;

/**
 * Unsubscribe push codes (docs/protocol.md "Unsubscribe codes"): below 2500 the subscription ends, from 2500
 * the client resubscribes.
 */
const UNSUBSCRIBE_ROWS = {
  client: [0, 'client unsubscribed'],
  disconnect: [1, 'client disconnected'],
  server: [2000, 'server unsubscribe'],
  insufficientState: [2500, 'insufficient state'],
  expired: [2501, 'subscription expired'],
  stateInvalidated: [2502, 'state invalidated'],
} as const;
export const UnsubscribeCode = codesOf(UNSUBSCRIBE_ROWS);

export const UNSUBSCRIBE_REASONS: ReadonlyMap<number, string> = messagesOf(UNSUBSCRIBE_ROWS);

/** The standard reason of an unsubscribe code; application codes without one get "server unsubscribe". */
export function unsubscribeReason(code: number): string {
  return UNSUBSCRIBE_REASONS.get(code) ?? 'server unsubscribe';
}

/**
 * Whether the JS client stops reconnecting after this close or disconnect code
 * (docs/protocol.md "Disconnect codes").
 */
export function isTerminalDisconnect(code: number): boolean {
  return (code >= 3500 && code <= 3999) || (code >= 4500 && code <= 4999);
}
