import type { IncomingHttpHeaders } from 'node:http';
import { exceedsJsonDepth } from '@parley/realtime';
import type {
  FastifyError,
  FastifyReply,
  FastifyRequest,
  FastifyServerOptions,
  RawServerDefault,
} from 'fastify';
import type { Logger } from 'pino';
import { AppError } from '../errors/app-error.ts';
import {
  formatSchemaErrors,
  jsonTooDeep,
  malformedUrl,
  methodNotAllowed,
  type RequestPart,
  routeNotFound,
  sendProblem,
  toAppError,
  unsafeText,
} from '../errors/problem.ts';
import { AccessLogController } from './access-log.ts';
import { createClientErrorHandler } from './client-errors.ts';
import { useJsonBodyParser } from './json-body.ts';
import { genReqId, REQUEST_ID_HEADER } from './request-id.ts';
import { ROUTER_OPTIONS, type RouteEntry, RouteMethods } from './route-methods.ts';
import type { App } from './types.ts';
import { findUnsafeText } from './unsafe-text.ts';

/**
 * The HTTP edge: what every request meets before (and instead of) a route. One place for the rules that hold on
 * every route —
 * - every response carries `X-Request-Id`, and every log line about the request carries it as `request_id`;
 * - text with U+0000 or an unpaired surrogate is refused as `validation_failed` (src/http/unsafe-text.ts), and so
 *   is JSON nesting deeper than 64 levels in a body (src/http/json-body.ts) or a header value;
 * - errors raised before routing (bad percent-encoding, over-long parameters, malformed HTTP) are problems;
 * - a path that exists without the request's method answers 405 with `Allow`; `OPTIONS` answers 204 with `Allow`.
 */
export interface Edge {
  /** Options for `Fastify(…)`: request ids, the access log, router limits and the pre-routing error handlers. */
  serverOptions: Pick<
    FastifyServerOptions<RawServerDefault>,
    | 'genReqId'
    | 'requestIdHeader'
    | 'logController'
    | 'routerOptions'
    | 'frameworkErrors'
    | 'clientErrorHandler'
    | 'schemaErrorFormatter'
  >;
  /** Installs the hooks and the not-found handler; call before any route is registered. */
  register(app: App): void;
  /** Every route the app registered (the index behind 405 and OPTIONS), e.g. for a suite that tries each one. */
  routes(): RouteEntry[];
}

export function createEdge(logger: Logger): Edge {
  const routes = new RouteMethods();
  const accessLog = new AccessLogController(logger);
  return {
    serverOptions: {
      genReqId,
      // Ids come from genReqId, which accepts the caller's X-Request-Id only when it is sane.
      requestIdHeader: false,
      logController: accessLog,
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
      // A body of 100,000 wrong items must not be answered with 100,000 messages (errors/problem.ts).
      schemaErrorFormatter: formatSchemaErrors,
    },
    register(app) {
      app.addHook('onRoute', (route) => routes.record(route));
      // JSON bodies of every route: nesting limited before they are parsed (http/json-body.ts).
      useJsonBodyParser(app);
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
