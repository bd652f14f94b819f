import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Readable } from 'node:stream';
import { SpanKind, type Tracing } from '../tracing/tracing.ts';
import { blockedError, type DestinationPolicy } from './address-policy.ts';
import { OutboundError } from './connectors.errors.ts';

export interface OutboundHttpOptions {
  /** Where calls may connect (SSRF protection): judged on the address each socket connects to. */
  destinations: DestinationPolicy;
  /** Default limit for the response headers to arrive, and for any silence while the body streams, in ms. */
  timeoutMs: number;
  /** Same-origin redirects followed before giving up. */
  maxRedirects: number;
  /** A client span per call, its W3C `traceparent` sent along (docs/design.md "Operations"). */
  tracing?: Tracing;
}

/** The `fetch` signature SDKs accept (`new OpenAI({ fetch })`). */
export type OutboundFetch = (
  input: string | URL | Request,
  init?: RequestInit & { timeoutMs?: number },
) => Promise<Response>;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * The one HTTP client every call to an integration goes through: a `fetch`-compatible function on node:http(s) so
 * the destination policy can see every resolved address, with
 * - a deadline for the response headers and an inactivity limit while the body streams (`timeoutMs`, overridable
 *   per call), on top of the caller's `signal`;
 * - redirects followed only within the same origin (scheme, host and port), so a connector key never travels to
 *   another host; a redirect elsewhere is refused with `connector_redirect_refused`, as is any redirect when the
 *   caller asks for `redirect: 'error'` (`'manual'` returns the 3xx response as is);
 * - errors rebuilt as `OutboundError` with a host and a reason code only, never the request headers.
 */
export class OutboundHttp {
  private readonly agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 64 }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 64 }),
  };

  constructor(private readonly options: OutboundHttpOptions) {}

  readonly fetch: OutboundFetch = async (input, init = {}) => {
    const request = new Request(input, init);
    const timeoutMs = init.timeoutMs ?? this.options.timeoutMs;
    const headers = new Headers(request.headers);
    let body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    let method = request.method;
    let url = new URL(request.url);
    for (let hop = 0; ; hop++) {
      // `request.signal` follows both `init.signal` and the signal of a Request passed as `input`.
      const response = await this.traced(url, method, headers, () =>
        this.send(url, method, headers, body, request.signal, timeoutMs),
      );
      if (!REDIRECTS.has(response.status) || request.redirect === 'manual') return response;
      await response.body?.cancel().catch(() => {});
      if (request.redirect === 'error') {
        throw new OutboundError(
          'connector_redirect_refused',
          `${url.host} answered with a redirect (${response.status}).`,
        );
      }
      const next = parseLocation(response.headers.get('location'), url);
      if (!next || next.origin !== url.origin) {
        throw new OutboundError(
          'connector_redirect_refused',
          `${url.host} redirected to another origin; such redirects are not followed (they would carry the key).`,
        );
      }
      if (hop >= this.options.maxRedirects) {
        throw new OutboundError(
          'connector_redirect_refused',
          `${url.host} redirected more than ${this.options.maxRedirects} times.`,
        );
      }
      // RFC 9110 §15.4.4 (303), and what browsers do for 301/302 after a POST: repeat as GET without a body.
      if (
        response.status === 303 ||
        ((response.status === 301 || response.status === 302) && method === 'POST')
      ) {
        method = 'GET';
        body = undefined;
        headers.delete('content-type');
        headers.delete('content-length');
      }
      url = next;
    }
  };

  /**
   * One hop in a client span (OpenTelemetry HTTP conventions: named by method, the host as `server.address`, no
   * path or query, which may carry ids); the span's `traceparent` goes out with the request, so the connector can
   * continue the trace. Ends when the response headers arrive.
   */
  private traced(
    url: URL,
    method: string,
    headers: Headers,
    send: () => Promise<Response>,
  ): Promise<Response> {
    const tracing = this.options.tracing;
    if (tracing === undefined || !tracing.enabled) return send();
    const attributes = { 'http.request.method': method, 'server.address': url.hostname };
    return tracing.inSpan(method, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      const carrier: Record<string, string> = {};
      tracing.inject(carrier);
      for (const [name, value] of Object.entries(carrier)) headers.set(name, value);
      const response = await send();
      span?.setAttribute('http.response.status_code', response.status);
      return response;
    });
  }

  /** Drops idle keep-alive sockets (on shutdown). */
  close(): void {
    this.agents['http:'].destroy();
    this.agents['https:'].destroy();
  }

  private send(
    url: URL,
    method: string,
    headers: Headers,
    body: Buffer | undefined,
    signal: AbortSignal | undefined,
    timeoutMs: number,
  ): Promise<Response> {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return Promise.reject(
        new OutboundError('connector_url_invalid', 'Only http and https URLs can be called.'),
      );
    }
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const destinations = this.options.destinations;
    // An IP literal (already canonical: the URL parser reads `0x7f.1` as 127.0.0.1) never goes through `lookup`.
    if (isIP(host) && destinations.refuses(host)) return Promise.reject(blockedError(url.host));
    if (signal?.aborted) return Promise.reject(signal.reason);

    return new Promise<Response>((resolve, reject) => {
      let settled = false;
      // Declared before `fail`, which a request that cannot even be built calls before the deadline is set.
      let deadline: NodeJS.Timeout | undefined;
      const fail = (err: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        reject(err);
      };
      let req: http.ClientRequest;
      try {
        req = (url.protocol === 'https:' ? https : http).request(url, {
          method,
          headers: Object.fromEntries(headers),
          agent: this.agents[url.protocol as 'http:' | 'https:'],
          ...(destinations.blocksPrivate ? { lookup: destinations.lookup as never } : {}),
        });
      } catch {
        // E.g. a header value Node refuses; its message would name the header, so report ours instead.
        return fail(
          new OutboundError('connector_url_invalid', `The request to ${url.host} could not be built.`),
        );
      }
      const timeout = () =>
        req.destroy(
          new OutboundError('connector_timeout', `${url.host} did not answer within ${timeoutMs} ms.`),
        );
      deadline = setTimeout(timeout, timeoutMs);
      req.setTimeout(timeoutMs, timeout);
      const onAbort = () => req.destroy(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('close', () => signal?.removeEventListener('abort', onAbort));
      req.on('error', (err) =>
        fail(signal?.aborted && err === signal.reason ? err : outboundErrorOf(err, url)),
      );
      req.on('response', (res) => {
        if (settled) return void res.destroy();
        settled = true;
        clearTimeout(deadline);
        try {
          resolve(toResponse(res, method));
        } catch {
          res.destroy();
          reject(
            new OutboundError(
              'connector_bad_response',
              `${url.host} sent a response that is not valid HTTP.`,
            ),
          );
        }
      });
      req.end(body);
    });
  }
}

function toResponse(res: IncomingMessage, method: string): Response {
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
    headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
  const status = res.statusCode ?? 0;
  const noBody = NULL_BODY.has(status) || method === 'HEAD';
  if (noBody) res.resume();
  const body = noBody ? null : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>);
  return new Response(body, { status, statusText: res.statusMessage ?? '', headers });
}

function parseLocation(location: string | null, base: URL): URL | undefined {
  if (!location) return undefined;
  try {
    return new URL(location, base);
  } catch {
    return undefined;
  }
}

/** Rebuilds a socket/TLS/DNS failure as an OutboundError naming the host and the error code only. */
function outboundErrorOf(err: unknown, url: URL): OutboundError {
  if (err instanceof OutboundError) return err;
  const code = String((err as { code?: unknown })?.code ?? '');
  if (code === 'ETIMEDOUT')
    return new OutboundError('connector_timeout', `${url.host} did not answer in time.`);
  const reason = /^[A-Z0-9_]{2,40}$/.test(code) ? ` (${code})` : '';
  return new OutboundError('connector_unreachable', `Could not reach ${url.host}${reason}.`);
}
