import type { RouteOptions } from 'fastify';
import FindMyWay from 'find-my-way';

/**
 * Fastify's router options that decide whether a path matches a route. The edge keeps a second router over the
 * same patterns (see {@link RouteMethods}), so both must read paths the same way.
 */
export const ROUTER_OPTIONS = {
  /** Longer path parameters are refused before routing (problem `path_parameter_too_long`, docs/errors.md). */
  maxParamLength: 100,
  ignoreTrailingSlash: false,
  ignoreDuplicateSlashes: false,
  caseSensitive: true,
  useSemicolonDelimiter: false,
} as const;

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route exists only to refuse its methods in its own error format (the token endpoint's RFC 6749 405):
     * its methods are not listed in `Allow`.
     */
    refusesMethod?: true;
  }
}

type Method = FindMyWay.HTTPMethod;
/** What an `onRoute` hook receives (the fields the index reads). */
type RecordedRoute = Pick<RouteOptions, 'method' | 'url' | 'config' | 'prefixTrailingSlash'> & {
  routePath: string;
};

/**
 * Which methods each path has, computed from the registered routes (fed by an `onRoute` hook): what a 405's `Allow`
 * header lists (RFC 9110 §15.5.6) and what an `OPTIONS` answers (§9.3.7). Fastify's own router answers only
 * "found or not" for one method, so a router of the same patterns, one tree per method, answers "which methods".
 */
/** One registered method of a route pattern (`/platform/v1/conversations/:id`). */
export interface RouteEntry {
  method: string;
  url: string;
}

export class RouteMethods {
  private readonly router = FindMyWay(ROUTER_OPTIONS);
  private readonly methods = new Set<Method>();
  private readonly entries: RouteEntry[] = [];

  /** Records a route as `onRoute` sees it. OPTIONS routes (CORS preflights) do not make a path exist. */
  record(route: RecordedRoute): void {
    if (route.config?.refusesMethod) return;
    const methods = [route.method].flat().filter((m) => m !== 'OPTIONS') as Method[];
    const urls = [route.url];
    // A prefix's own route ('' under `prefix`) also answers `prefix/` unless it chose one form (Fastify's default).
    if (route.routePath === '' && (route.prefixTrailingSlash ?? 'both') === 'both')
      urls.push(`${route.url}/`);
    for (const method of methods) {
      this.methods.add(method);
      this.entries.push({ method, url: route.url });
      for (const url of urls) this.add(method, url);
    }
  }

  /** Every route and method registered (OPTIONS and method-refusing routes left out), in registration order. */
  list(): RouteEntry[] {
    return [...this.entries];
  }

  /** The methods `path` (a request URL; a query string is ignored) has, HEAD wherever GET is; none when unknown. */
  allowedFor(path: string): string[] {
    const allowed = new Set<string>();
    for (const method of this.methods) if (this.router.find(method, path)) allowed.add(method);
    if (allowed.has('GET')) allowed.add('HEAD');
    return [...allowed].sort();
  }

  private add(method: Method, url: string): void {
    try {
      this.router.on(method, url, noop);
    } catch {
      // The same pattern under other constraints: it is already known to have this method.
    }
  }
}

const noop = () => {};
