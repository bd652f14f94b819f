import cluster from 'node:cluster';
import { createHash, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AggregatorRegistry, type Counter, type Histogram } from 'prom-client';
import type { Config } from '../config/schema.ts';
import { AppError } from '../errors/app-error.ts';
import { sendProblem } from '../http/problem.ts';
import type { ResponseObserver } from '../http/response-observers.ts';
import { routeTemplateOf } from '../http/route-template.ts';
import type { App } from '../http/types.ts';
import type { Metrics } from './metrics.ts';

export const METRICS_PATH = '/metrics';

/**
 * Exposes the metrics (docs/operations.md "Metrics", docs/design.md "Operations"): on a listener of its own when
 * `metrics.port` is set (for a scrape network the public never reaches; no token there), else on the main port
 * behind `metrics.token`; with neither, `/metrics` does not exist (404). Register it after the OpenAPI plugin, which
 * documents only the routes registered after it.
 */
export async function registerMetricsEndpoint(app: App, metrics: Metrics, config: Config): Promise<void> {
  const { port, token } = config.metrics;
  if (port !== undefined && cluster.isWorker) {
    // A worker of PARLEY_WORKERS: the primary serves the scrape port with every worker's figures added up
    // (cluster/primary.ts); it asks this worker for its registry over the cluster's IPC channel.
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([metrics.registry]);
  } else if (port !== undefined) {
    const listener = await listenForScrapes(() => metrics.render(), metrics.contentType, port, config.host);
    app.addHook('onClose', async () => {
      listener.closeAllConnections();
      await new Promise((resolve) => listener.close(resolve));
    });
  } else if (token !== undefined) {
    registerProtectedRoute(app, metrics, token);
  }
}

/**
 * One count and one duration per answered request, labelled with the route's template (`/…/{id}` as registered),
 * never the path, so ids in paths add no series; requests no route matched share one label. An observer for the
 * app's one `onResponse` hook (packages/server/src/http/response-observers.ts): it runs on every request, the token
 * endpoint's hot path included.
 */
export function requestMetricsObserver(metrics: Metrics): ResponseObserver {
  // prom-client's `labels()` builds a label object and bound functions at every call: they are kept, one per
  // route, method and status, in nested maps so that finding them allocates nothing per request.
  const byRoute = new Map<string, Map<string, Map<number, RequestSeries>>>();
  return (request, reply) => {
    const route = routeTemplateOf(request);
    const { method } = request;
    const status = reply.statusCode;
    let byMethod = byRoute.get(route);
    if (byMethod === undefined) {
      byMethod = new Map();
      byRoute.set(route, byMethod);
    }
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) {
      byStatus = new Map();
      byMethod.set(method, byStatus);
    }
    let series = byStatus.get(status);
    if (series === undefined) {
      series = {
        counter: metrics.httpRequests.labels(method, route, String(status)),
        histogram: metrics.httpDuration.labels(method, route),
      };
      byStatus.set(status, series);
    }
    series.counter.inc();
    series.histogram.observe(reply.elapsedTime / 1000);
  };
}

/** The bound children of one route, method and status. */
interface RequestSeries {
  counter: Counter.Internal;
  histogram: Histogram.Internal<'method' | 'route'>;
}

function registerProtectedRoute(app: App, metrics: Metrics, token: string): void {
  const expected = digest(token);
  app.get(
    METRICS_PATH,
    {
      schema: {
        tags: ['operations'],
        summary: 'Prometheus metrics (text exposition format), behind PARLEY_METRICS_TOKEN',
        security: [{ bearer: [] }],
        produces: ['text/plain'],
        response: { 200: Type.String({ description: 'Prometheus text format 0.0.4' }) },
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      if (!presentsToken(request.headers.authorization, expected)) {
        return sendProblem(reply, metricsTokenInvalid());
      }
      return reply.type(metrics.contentType).send(await metrics.render());
    },
  );
}

/** Compares digests, so the comparison takes the same time whatever the presented token's length or content. */
function presentsToken(authorization: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer +(\S+)\s*$/i.exec(authorization ?? '');
  return match !== null && timingSafeEqual(digest(match[1]!), expected);
}

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

const metricsTokenInvalid = () =>
  new AppError(
    401,
    'metrics_token_invalid',
    'GET /metrics needs Authorization: Bearer with the metrics token.',
    {},
    { 'www-authenticate': 'Bearer realm="parley-metrics"' },
  );

/** The scrape listener: `GET /metrics` and nothing else, on the main host's address. */
export async function listenForScrapes(
  render: () => Promise<string>,
  contentType: string,
  port: number,
  host: string,
): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== METRICS_PATH) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    render().then(
      (text) => response.writeHead(200, { 'content-type': contentType }).end(text),
      () => response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n'),
    );
  });
  server.listen(port, host);
  await once(server, 'listening');
  return server;
}
