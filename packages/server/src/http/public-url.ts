import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config/schema.ts';

type PublicUrlConfig = Pick<Config, 'publicUrl' | 'publicUrlConfigured'>;

/**
 * The origin (`scheme://host[:port]`) a request was addressed to: its Host (RFC 9110 §7.2), or X-Forwarded-Host and
 * X-Forwarded-Proto behind a trusted proxy (Fastify's `request.host` / `request.protocol`). Undefined when the
 * Host is not a plain authority, so a malformed header never becomes part of a URL.
 */
export function requestOrigin(request: FastifyRequest): string | undefined {
  return originOfAuthority(request.protocol, request.host);
}

/**
 * The request's `Origin` (RFC 6454 §7) when it names the very host the request was sent to — a page this server
 * served under that name, calling home. Undefined for other origins, a missing Origin, or a malformed one.
 */
export function sameHostOrigin(request: FastifyRequest): string | undefined {
  return originNamingHost(header(request.headers, 'origin'), request.host);
}

/** The same test on a raw request (the WebSocket upgrade), trusting X-Forwarded-Host only behind a proxy. */
function sameHostOriginOfUpgrade(
  origin: string | undefined,
  headers: IncomingHttpHeaders,
  trustProxy: boolean,
): string | undefined {
  const forwarded = trustProxy ? header(headers, 'x-forwarded-host')?.split(',').pop()?.trim() : undefined;
  return originNamingHost(origin, forwarded || header(headers, 'host'));
}

/**
 * The base URL to hand this request's client (realtime URL, embed snippet): PARLEY_PUBLIC_URL when it is
 * configured; otherwise the origin the request came in on, so a development server answers
 * http://127.0.0.1:8080 as well as http://localhost:8080 (docs/config.md, PARLEY_PUBLIC_URL). A same-host Origin
 * is preferred to the request's scheme: it is what the browser really uses (a TLS proxy may hide it).
 */
export function publicUrlFor(config: PublicUrlConfig, request: FastifyRequest): string {
  if (config.publicUrlConfigured) return config.publicUrl;
  return sameHostOrigin(request) ?? requestOrigin(request) ?? config.publicUrl;
}

/** The browser origins that count as Parley's own for this request: the public URL's, and in development its Host's. */
export function ownOriginsFor(config: PublicUrlConfig, request: FastifyRequest): string[] {
  return ownOrigins(config, () => sameHostOrigin(request));
}

/** `ownOriginsFor` of a WebSocket upgrade (a raw request: X-Forwarded-Host counts only with `trustProxy`). */
export function ownOriginsOfUpgrade(
  config: PublicUrlConfig & Pick<Config, 'trustProxy'>,
  origin: string | undefined,
  headers: IncomingHttpHeaders,
): string[] {
  return ownOrigins(config, () => sameHostOriginOfUpgrade(origin, headers, config.trustProxy));
}

/** The public URL's origin and, without PARLEY_PUBLIC_URL (development), `sameHost` when it names another. */
function ownOrigins(config: PublicUrlConfig, sameHost: () => string | undefined): string[] {
  const own = originOfPublicUrl(config.publicUrl);
  const same = config.publicUrlConfigured ? undefined : sameHost();
  return same && same !== own ? [own, same] : [own];
}

/**
 * The origin of PARLEY_PUBLIC_URL, parsed once per value rather than on every SDK request and WebSocket upgrade (a
 * WHATWG URL parse was 2 % of a conversation's creation, issue 27). One entry: a process has one public URL, and a
 * test that changes it simply parses again.
 */
let lastPublicUrl: { url: string; origin: string } | undefined;
function originOfPublicUrl(url: string): string {
  if (lastPublicUrl?.url !== url) lastPublicUrl = { url, origin: new URL(url).origin };
  return lastPublicUrl.origin;
}

/** The realtime endpoint under a base URL (`http` → `ws`, `https` → `wss`). */
export const websocketUrlOf = (baseUrl: string): string =>
  `${baseUrl.replace(/^http/, 'ws')}/connection/websocket`;

/** The WebSocket fallbacks under a base URL: HTTP-streaming, SSE, and where their commands go. */
export const realtimeFallbackUrlsOf = (
  baseUrl: string,
): { http_stream_url: string; sse_url: string; emulation_url: string } => ({
  http_stream_url: `${baseUrl}/connection/http_stream`,
  sse_url: `${baseUrl}/connection/sse`,
  emulation_url: `${baseUrl}/emulation`,
});

function originNamingHost(origin: string | undefined, host: string | undefined): string | undefined {
  if (!origin || !host) return undefined;
  const url = parseHttpUrl(origin);
  if (!url) return undefined;
  return url.host === authority(url.protocol, host)?.host ? url.origin : undefined;
}

function originOfAuthority(protocol: string, host: string): string | undefined {
  return authority(`${protocol}:`, host)?.origin;
}

/** `host` as a URL authority under this scheme (default ports dropped, lower case), or undefined if it is not one. */
function authority(scheme: string, host: string): URL | undefined {
  if (!host || /[/?#@\\\s]/.test(host)) return undefined;
  return parseHttpUrl(`${scheme}//${host}`);
}

function parseHttpUrl(text: string): URL | undefined {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
