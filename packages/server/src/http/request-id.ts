import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** Sent on every response, echoed from the request when it is sane (docs/architecture.md "Flow of a request"). */
export const REQUEST_ID_HEADER = 'x-request-id';

/** The key of the request id in every log line about a request (Fastify's request-id log label). */
export const REQUEST_ID_LOG_LABEL = 'request_id';

/**
 * 1–128 characters of letters, digits and `. _ : -`: enough for UUIDs, ULIDs, W3C trace ids and load-balancer ids,
 * and nothing that could split a log line, forge a header or smuggle markup into a log viewer.
 */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The id of one request: the caller's `X-Request-Id` when it is sane (so a proxy's or client's id follows the
 * request through our logs), otherwise a fresh UUID. A header sent twice is not sane.
 */
export function requestIdOf(header: string | string[] | undefined): string {
  return typeof header === 'string' && SANE_REQUEST_ID.test(header) ? header : randomUUID();
}

/** Fastify's `genReqId`: runs for routed requests and for the framework's own early refusals alike. */
export const genReqId = (request: IncomingMessage): string => requestIdOf(request.headers[REQUEST_ID_HEADER]);
