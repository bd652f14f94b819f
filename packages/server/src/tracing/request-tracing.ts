import { type Span, SpanStatusCode } from '@opentelemetry/api';
import type { FastifyRequest } from 'fastify';
import type { ResponseObserver } from '../http/response-observers.ts';
import { routeTemplateOf } from '../http/route-template.ts';
import type { App } from '../http/types.ts';
import type { Tracing } from './tracing.ts';

const SPAN = Symbol('parley.span');
type TracedRequest = FastifyRequest & { [SPAN]?: Span };

/**
 * A server span per request (OpenTelemetry HTTP semantic conventions: `GET /route/{template}`), continuing the
 * caller's W3C `traceparent`. The span is made active where the request starts and again just before its handler
 * (a body arrives through socket events, which do not carry the context), so store queries, token grants and
 * outbound calls made while handling it are its children. No hooks at all while tracing is off. The span is ended
 * by the returned observer, which the caller hands to the app's one `onResponse` hook
 * (packages/server/src/http/response-observers.ts); `undefined` while tracing is off.
 */
export function registerRequestTracing(app: App, tracing: Tracing): ResponseObserver | undefined {
  if (!tracing.enabled) return undefined;
  app.addHook('onRequest', (request, _reply, done) => {
    const span = tracing.startServerSpan(request.method, request.headers, {
      'http.request.method': request.method,
      'url.path': request.url.split('?')[0],
    });
    (request as TracedRequest)[SPAN] = span;
    tracing.withSpan(span, done);
  });
  app.addHook('preHandler', (request, _reply, done) => {
    tracing.withSpan((request as TracedRequest)[SPAN], done);
  });
  return (request, reply) => {
    const span = (request as TracedRequest)[SPAN];
    if (span === undefined) return;
    const route = routeTemplateOf(request);
    span.updateName(`${request.method} ${route}`);
    span.setAttribute('http.route', route);
    span.setAttribute('http.response.status_code', reply.statusCode);
    if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  };
}
