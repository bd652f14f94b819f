import type { IncomingHttpHeaders } from 'node:http';
import { ErrorCode } from '../protocol/codes.ts';
import { ClientError, DisconnectError } from '../protocol/errors.ts';
import type { ResolvedProxyEndpoint } from './options.ts';

/**
 * One proxy call (docs/protocol.md "Proxies"): a JSON POST to the backend with Centrifugo's payload, answered with
 * `{"result": …}`, `{"error": {code, message, temporary}}` or `{"disconnect": {code, reason}}`. The error and the
 * disconnect reach the client as they are; a backend that cannot be reached, answers late (`timeout`), answers
 * another status than 200 (unless `status_to_code_transforms` maps it) or answers something that is not such an
 * object is a `ProxyFailure`, which each caller turns into what Centrifugo does (mostly 100, temporary).
 */

export class ProxyFailure extends Error {
  readonly code = 'realtime_proxy_failed' as const;
}

/** The request headers: static ones, then the client's listed ones (they win), then the content type. */
function headersFor(endpoint: ResolvedProxyEndpoint, client: IncomingHttpHeaders | undefined): Headers {
  const headers = new Headers(endpoint.staticHeaders);
  if (client !== undefined) {
    for (const name of endpoint.httpHeaders) {
      const value = client[name];
      if (typeof value === 'string') headers.set(name, value);
      else if (Array.isArray(value)) headers.set(name, value.join(', '));
    }
  }
  headers.set('Content-Type', 'application/json');
  return headers;
}

function statusOutcome(endpoint: ResolvedProxyEndpoint, status: number): never {
  const transform = endpoint.transforms.find((t) => t.status_code === status);
  if (transform?.to_error && transform.to_error.code > 0) {
    const { code, message, temporary } = transform.to_error;
    throw new ClientError(code, message, { temporary: temporary === true });
  }
  if (transform?.to_disconnect && transform.to_disconnect.code > 0) {
    throw new DisconnectError(transform.to_disconnect.code, transform.to_disconnect.reason);
  }
  throw new ProxyFailure(`proxy ${endpoint.endpoint} answered HTTP ${status}`);
}

/** POSTs `body`; resolves with `result` (undefined when the backend sent none) or throws as described above. */
export async function callProxy(
  endpoint: ResolvedProxyEndpoint,
  clientHeaders: IncomingHttpHeaders | undefined,
  body: Record<string, unknown>,
): Promise<Record<string, unknown> | undefined> {
  let response: Response;
  try {
    response = await fetch(endpoint.endpoint, {
      method: 'POST',
      headers: headersFor(endpoint, clientHeaders),
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(endpoint.timeoutMs),
    });
  } catch (error) {
    throw new ProxyFailure(`proxy ${endpoint.endpoint} unreachable: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    statusOutcome(endpoint, response.status);
  }
  let reply: unknown;
  try {
    reply = await response.json();
  } catch (error) {
    throw new ProxyFailure(`proxy ${endpoint.endpoint} answered malformed JSON`, { cause: error });
  }
  if (reply === null || typeof reply !== 'object' || Array.isArray(reply)) {
    throw new ProxyFailure(`proxy ${endpoint.endpoint} answered something that is not an object`);
  }
  const { result, error, disconnect } = reply as Record<string, unknown>;
  if (isObject(disconnect) && typeof disconnect.code === 'number') {
    throw new DisconnectError(
      disconnect.code,
      typeof disconnect.reason === 'string' ? disconnect.reason : undefined,
    );
  }
  if (isObject(error) && typeof error.code === 'number') {
    throw new ClientError(error.code, typeof error.message === 'string' ? error.message : undefined, {
      temporary: error.temporary === true,
    });
  }
  return isObject(result) ? result : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** What a failed proxy call is for the client of a command: 100 "internal server error", temporary (it retries). */
export function proxyFailureToClientError(error: unknown): unknown {
  return error instanceof ProxyFailure
    ? new ClientError(ErrorCode.internal, undefined, { cause: error })
    : error;
}

/**
 * A `bytes` field of a result: `<name>` (embedded JSON) or `b64<name>` (base64 of JSON) as raw JSON text; base64
 * that does not hold JSON is a failure (a JSON client could not take it).
 */
export function rawJsonField(result: Record<string, unknown>, name: string): string | undefined {
  const b64 = result[`b64${name}`];
  if (typeof b64 === 'string' && b64 !== '') {
    try {
      return JSON.stringify(JSON.parse(Buffer.from(b64, 'base64').toString('utf8')));
    } catch {
      throw new ProxyFailure(`proxy result b64${name} does not hold JSON`);
    }
  }
  const value = result[name];
  return value === undefined || value === null ? undefined : JSON.stringify(value);
}

/** A raw JSON payload for a request: `<name>` embedded, or `b64<name>` with `binary_encoding`. */
export function payloadField(
  endpoint: ResolvedProxyEndpoint,
  name: string,
  raw: string | undefined,
): Record<string, unknown> {
  if (raw === undefined || raw === '') return {};
  return endpoint.binaryEncoding
    ? { [`b64${name}`]: Buffer.from(raw).toString('base64') }
    : { [name]: JSON.parse(raw) as unknown };
}
