import type { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http';
import type { Config } from '../config/schema.ts';

export type TimeLimits = Pick<Config['http'], 'headersTimeoutMs' | 'bodyTimeoutMs' | 'keepAliveTimeoutMs'>;

/** The part of `Fastify(…)`'s options that carries them (`http` goes to `http.createServer`). */
export interface TimeLimitOptions {
  keepAliveTimeout: number;
  requestTimeout: number;
  http: ServerOptions;
}

/**
 * Node's own time-outs for `Fastify(…)` (docs/config.md "HTTP edge"):
 * - `headersTimeout`: the request line and headers complete within headersTimeoutMs of the request's first byte (or
 *   of the connection opening, for a connection that sends nothing) → Node reports ERR_HTTP_REQUEST_TIMEOUT, which
 *   the edge's client-error handler answers 408 `request_timeout` before closing;
 * - `requestTimeout`: the whole request within headers + body time — a backstop for whatever `watchBodies` does not
 *   see (it only starts at the `request` event);
 * - `keepAliveTimeout`: an idle kept-alive connection closes after keepAliveTimeoutMs;
 * - `connectionsCheckingInterval`: how often Node looks for expired requests. Its default (30 s) would let a 30 s
 *   limit run to 60 s, so it is a fifth of the shortest limit, at most a second.
 * Node applies none of these to an upgraded connection (a WebSocket) or to a response that streams for long after
 * its request arrived (HTTP-streaming and SSE), so the realtime transports are not affected.
 */
export function timeLimitOptions(limits: TimeLimits): TimeLimitOptions {
  const checkEvery = Math.max(20, Math.min(1000, Math.floor(limits.headersTimeoutMs / 5)));
  return {
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    requestTimeout: limits.headersTimeoutMs + limits.bodyTimeoutMs,
    http: { headersTimeout: limits.headersTimeoutMs, connectionsCheckingInterval: checkEvery },
  };
}

/**
 * The body time-out, which Node does not have (its `requestTimeout` runs from the first byte, not from the end of the
 * headers): a request whose body has not fully arrived `bodyTimeoutMs` after its headers is handed to `expired` —
 * which answers 408 when no answer has started and closes the connection either way. A request without a body, or
 * whose body completes in time, costs one timer set and cleared.
 */
export function watchBodies(
  server: Server,
  bodyTimeoutMs: number,
  expired: (request: IncomingMessage, response: ServerResponse) => void,
): void {
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (!hasBody(request) || request.complete) return;
    const timer = setTimeout(onBodyTimeout, bodyTimeoutMs, request, response, expired);
    // The connection keeps the process alive, not this timer: a closed server does not wait for it.
    timer.unref();
    const clear = () => clearTimeout(timer);
    request.once('end', clear);
    request.once('close', clear);
  });
}

function onBodyTimeout(
  request: IncomingMessage,
  response: ServerResponse,
  expired: (request: IncomingMessage, response: ServerResponse) => void,
): void {
  // Arrived in full but never read (the answer did not need it): nothing is late.
  if (request.complete || request.socket.destroyed) return;
  expired(request, response);
}

/** RFC 9112 §6.3: a request has a body when it carries Transfer-Encoding or a non-zero Content-Length. */
function hasBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
