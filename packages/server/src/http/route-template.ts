import type { FastifyRequest } from 'fastify';

/** The route of requests no route matched (404s, 405s, pre-routing refusals): one value whatever the path. */
export const UNMATCHED_ROUTE = '(unmatched)';

/**
 * The route a request matched as registered (`/platform/v1/conversations/:id`), never its path: what metrics label
 * and trace spans name requests by, so ids in paths add no series and no span names.
 */
export function routeTemplateOf(request: FastifyRequest): string {
  return request.is404 ? UNMATCHED_ROUTE : (request.routeOptions.url ?? UNMATCHED_ROUTE);
}
