import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { exceedsJsonDepth } from '@parley/realtime';
import type {
  FastifyError,
  FastifyReply,
  FastifyRequest,
  FastifyServerOptions,
  RawServerDefault,
} from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.ts';
import { AppError } from '../errors/app-error.ts';
import { lazyRequestLogger } from '../logging/request-logger.ts';
import { AccessLogController } from './access-log.ts';
import { parseBodyText } from './body-text.ts';
import { clientAddressOf } from './client-address.ts';
import { answerAndClose, closeAfterLinger, createClientErrorHandler } from './client-errors.ts';
import {
  AddressCounts,
  addressKey,
  capConnections,
  capForwardedUpgrades,
  tooManyConnections,
} from './connection-limits.ts';
import { useJsonBodyParser } from './json-body.ts';
import {
  formatSchemaErrors,
  jsonTooDeep,
  malformedUrl,
  methodNotAllowed,
  type RequestPart,
  requestTimedOut,
  routeNotFound,
  sendProblem,
  toAppError,
  unsafeText,
} from './problem.ts';
import { genReqId, REQUEST_ID_HEADER, requestIdOf } from './request-id.ts';
import { ROUTER_OPTIONS, type RouteEntry, RouteMethods } from './route-methods.ts';
import { type TimeLimitOptions, timeLimitOptions, watchBodies } from './time-limits.ts';
import type { App } from './types.ts';
import { findUnsafeText } from './unsafe-text.ts';

/**
 * The HTTP edge: what every request meets before (and instead of) a route. One place for the rules that hold on
 * every route —
 * - every response carries `X-Request-Id`, and every log line about the request carries it as `request_id`;
 * - text with U+0000 or an unpaired surrogate is refused as `validation_failed` (src/http/unsafe-text.ts), and so
 *   is JSON nesting deeper than 64 levels in a body (src/http/json-body.ts) or a header value;
 * - text bodies are read onto V8's heap, never kept as socket chunks (body-text.ts);
 * - errors raised before routing (bad percent-encoding, over-long parameters, malformed HTTP) are problems;
 * - a path that exists without the request's method answers 405 with `Allow`; `OPTIONS` answers 204 with `Allow`;
 * - headers and bodies that do not arrive in time are answered 408 `request_timeout` and their connection closed,
 *   idle kept-alive connections close (time-limits.ts);
 * - a client address holds at most `maxConnectionsPerAddress` connections; the next is answered 503
 *   `too_many_connections` and closed (connection-limits.ts).
 */
export interface Edge {
  /** Options for `Fastify(…)`: request ids, the access log, router limits and the pre-routing error handlers. */
  serverOptions: Pick<
    FastifyServerOptions<RawServerDefault>,
    | 'genReqId'
    | 'requestIdHeader'
    | 'childLoggerFactory'
    | 'logController'
    | 'routerOptions'
    | 'frameworkErrors'
    | 'clientErrorHandler'
    | 'schemaErrorFormatter'
  > &
    TimeLimitOptions;
  /** Installs the hooks and the not-found handler; call before any route is registered. */
  register(app: App): void;
  /** Every route the app registered (the index behind 405 and OPTIONS), e.g. for a suite that tries each one. */
  routes(): RouteEntry[];
}

/** The settings the edge enforces (docs/config.md "HTTP edge"). */
export type EdgeSettings = Pick<Config, 'http' | 'trustProxy'>;

/** What the edge reports of the connections it refuses or cuts (metrics). */
export interface EdgeEvents {
  refused(reason: 'too_many_connections' | 'request_timeout'): void;
}

export function createEdge(logger: Logger, settings: EdgeSettings, events?: EdgeEvents): Edge {
  const routes = new RouteMethods();
  const accessLog = new AccessLogController(logger);
  const counts = new AddressCounts(settings.http.maxConnectionsPerAddress);
  // An upgrade's Duplex is the request's net.Socket (Node hands the socket itself to `upgrade` listeners).
  const refuseConnection = (socket: Duplex) => {
    events?.refused('too_many_connections');
    answerAndClose(socket as Socket, tooManyConnections(counts.max), randomUUID());
  };
  const bodyTimedOut = (request: IncomingMessage, response: ServerResponse) => {
    events?.refused('request_timeout');
    const requestId = requestIdOf(request.headers[REQUEST_ID_HEADER]);
    logger
      .child({ request_id: requestId })
      .info({ req: { method: request.method, url: request.url } }, 'request body did not arrive in time');
    // An answer already under way cannot become a 408; the connection is closed all the same.
    if (response.headersSent) return closeAfterLinger(request.socket);
    answerAndClose(request.socket, requestTimedOut(), requestId);
  };
  return {
    serverOptions: {
      ...timeLimitOptions(settings.http),
      genReqId,
      // Ids come from genReqId, which accepts the caller's X-Request-Id only when it is sane.
      requestIdHeader: false,
      logController: accessLog,
      // A request's own logger is made when something logs through it, not for every request
      // (packages/server/src/logging/request-logger.ts).
      childLoggerFactory: lazyRequestLogger,
      routerOptions: { ...ROUTER_OPTIONS },
      frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
        // These requests never reach a route, so Fastify writes no access-log line for them: write it here.
        reply.raw.once('finish', () => accessLog.requestCompleted(null, request, reply));
        reply.header(REQUEST_ID_HEADER, request.id);
        const appError = toAppError(error);
        if (!appError) request.log.error({ err: error }, 'unhandled error');
        sendProblem(reply, appError ?? internalError());
      },
      clientErrorHandler: createClientErrorHandler(routes, logger),
      // A body of 100,000 wrong items must not be answered with 100,000 messages (http/problem.ts).
      schemaErrorFormatter: formatSchemaErrors,
    },
    register(app) {
      app.addHook('onRoute', (route) => routes.record(route));
      watchBodies(app.server, settings.http.bodyTimeoutMs, bodyTimedOut);
      closeIdleWhileClosing(app);
      // JSON bodies of every route: nesting limited before they are parsed (http/json-body.ts). Plain text as it
      // is; both held on V8's heap while they arrive (body-text.ts).
      useJsonBodyParser(app);
      app.removeContentTypeParser('text/plain');
      app.addContentTypeParser(
        'text/plain',
        parseBodyText((_request, body, done) => done(null, body)),
      );
      // Callback-style hooks: they run on every request, the token endpoint's hot path included, and a callback
      // costs less than a promise.
      app.addHook('onRequest', (request, reply, done) => {
        reply.header(REQUEST_ID_HEADER, request.id);
        if (!hasWellFormedQuery(request.url)) return done(malformedUrl());
        done(
          unsafeTextIn(request.headers, 'headers') ??
            deepJsonHeaderIn(request.headers) ??
            unsafeTextIn(request.query, 'querystring') ??
            unsafeTextIn(request.params, 'params'),
        );
      });
      if (!settings.trustProxy) {
        capConnections(app.server, counts, refuseConnection);
      } else {
        // Behind a proxy the sockets are the proxy's: the cap follows the forwarded address of each request (after
        // the request id is set, so the refusal carries it) …
        app.addHook('onRequest', (request, reply, done) => {
          const address = addressKey(request.ip);
          if (!counts.acquire(address)) return done(tooManyConnections(counts.max));
          reply.raw.once('close', () => counts.release(address));
          done();
        });
        // … and of each WebSocket, once the realtime engine's upgrade listener is registered.
        app.addHook('onReady', (done) => {
          capForwardedUpgrades(app.server, counts, (r) => clientAddressOf(r, true), refuseConnection);
          done();
        });
      }
      // Bodies are parsed after onRequest; this runs before schema validation, so the answer is the same whatever
      // else the body gets wrong.
      app.addHook('preValidation', (request, _reply, done) => done(unsafeTextIn(request.body, 'body')));
      app.setNotFoundHandler(async (request, reply) => {
        const path = request.url.split('?')[0]!;
        const allowed = routes.allowedFor(path);
        if (allowed.length === 0 || allowed.includes(request.method)) {
          return sendProblem(reply, routeNotFound(request.method, path));
        }
        if (request.method === 'OPTIONS') return reply.header('allow', allowed.join(', ')).status(204).send();
        return sendProblem(reply, methodNotAllowed(request.method, allowed));
      });
    },
    routes: () => routes.list(),
  };
}

/** How often a closing server looks again for kept-alive connections that have just gone idle. */
const CLOSING_SWEEP_MS = 100;

/**
 * Node closes the idle kept-alive connections once, when the server starts closing; a response still under way then
 * (a download's last chunk) leaves its connection idle a moment later, and the close would wait for it until
 * `keepAliveTimeout` (72 s). While closing, such connections are closed as they go idle.
 */
function closeIdleWhileClosing(app: App): void {
  app.addHook('preClose', (done) => {
    const sweep = setInterval(() => app.server.closeIdleConnections(), CLOSING_SWEEP_MS);
    sweep.unref();
    app.server.once('close', () => clearInterval(sweep));
    done();
  });
}

/** The refusal for the first string of `value` that breaks the text rule, if any. */
function unsafeTextIn(value: unknown, part: RequestPart): AppError | undefined {
  const field = findUnsafeText(value);
  if (field === undefined) return undefined;
  // `*` is the wildcard parameter of the not-found route and of catch-all routes: the path itself.
  return unsafeText(part, field === '' ? `(${part})` : part === 'params' && field === '*' ? '(path)' : field);
}

/**
 * The refusal for a header whose value is JSON nesting deeper than the limit (docs/design.md "JSON nesting"): no
 * route reads such a value, but none may ever walk one either.
 */
function deepJsonHeaderIn(headers: IncomingHttpHeaders): AppError | undefined {
  for (const name in headers) {
    const value = headers[name];
    for (const text of Array.isArray(value) ? value : [value]) {
      if (text !== undefined && (text[0] === '[' || text[0] === '{') && exceedsJsonDepth(text))
        return jsonTooDeep('headers', name);
    }
  }
  return undefined;
}

/**
 * Fastify's query parser keeps a malformed escape as it stands instead of refusing it, so the query would reach
 * handlers half-decoded. `decodeURIComponent` throws on `%zz` and on escapes that are not UTF-8 (`%ED%A0%80`).
 */
function hasWellFormedQuery(url: string): boolean {
  const start = url.indexOf('?');
  if (start === -1 || !url.includes('%', start)) return true;
  try {
    decodeURIComponent(url.slice(start + 1));
    return true;
  } catch {
    return false;
  }
}

const internalError = () => new AppError(500, 'internal_error', 'An internal error occurred.');
