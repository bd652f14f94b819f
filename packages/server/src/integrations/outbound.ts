import type { Static } from '@sinclair/typebox';
import type { Logger } from 'pino';
import type { AppError } from '../errors/app-error.ts';
import { connectorType } from './connector-types.ts';
import { ConnectorKeyNotSetError, ConnectorKeyUnreadableError, OutboundError } from './connectors.errors.ts';
import type { CheckView } from './connectors.schemas.ts';
import type { ConnectorsService } from './connectors.service.ts';
import type { OutboundFetch, OutboundHttp } from './outbound-http.ts';

/** What `resolveConnectorCredentials` hands to code that builds its own requests (the `openai` package). */
export interface ConnectorCredentials {
  /** The connector's URL (for `openai`: the API base URL, e.g. `https://api.openai.com/v1`). */
  baseUrl: string;
  /** The current key, opened just now. Use it for this call only: do not keep it, log it or put it in an error. */
  apiKey: string;
  /** Version of that key (metadata, safe to log). */
  keyVersion: number;
  /**
   * The outbound `fetch` (destination policy, same-origin redirects only, timeouts). Pass it to SDKs, e.g.
   * `new OpenAI({ apiKey, baseURL: baseUrl, fetch })`, so their calls follow the same rules as `connectorFetch`.
   */
  fetch: OutboundFetch;
}

/**
 * Answer of `POST /integrations/v1/connectors/{id}/check` (and the portal's check), as its response schema declares:
 * `status` 0 and an `error` code of docs/errors.md when no answer arrived; `latency_ms` until the response headers
 * (or the failure) arrived.
 */
export type CheckResult = Static<typeof CheckView>;

/**
 * The outbound side of connectors, used by everything that calls an integration (the check endpoint, the webhook
 * and OpenAI digital employees). Every call reads the connector and opens its key **at call time** — there is no
 * key cache — so the call after a rotation uses the new key, on every node sharing the database.
 *
 * Structurally it is the `ConnectorCaller` port of src/digital-employees (`fetch`, `credentials`).
 */
export class OutboundClient {
  constructor(
    private readonly connectors: ConnectorsService,
    private readonly http: OutboundHttp,
    private readonly logger: Logger,
    private readonly checkTimeoutMs: number,
  ) {}

  /**
   * Calls a connector: `init` is sent to the connector's URL joined with `path` (relative; `''` = the URL itself)
   * with the connector type's authentication (`Authorization: Bearer <current key>`; any Authorization header in
   * `init` is replaced). Resolves with the `Response` as `fetch` would, whatever its status.
   *
   * Rejects with `connector_not_found` (404; also for another company's connector), `connector_key_not_set` (409),
   * `connector_key_unreadable` (500, integrity check failed), or an `OutboundError` (`connector_unreachable`,
   * `connector_timeout`, `connector_destination_blocked`, `connector_redirect_refused`, `connector_bad_response`,
   * `connector_url_invalid`), or the `signal`'s reason when aborted. No error carries the key.
   */
  async connectorFetch(
    companyId: string,
    connectorId: string,
    path: string,
    init: RequestInit & { timeoutMs?: number } = {},
  ): Promise<Response> {
    const { connector, apiKey } = await this.connectors.readCredentials(companyId, connectorId);
    const url = joinUrl(connector.url, path);
    const headers = new Headers(init.headers);
    headers.delete('authorization');
    for (const [name, value] of Object.entries(authHeaders(connector.type, apiKey))) headers.set(name, value);
    this.logger.debug(
      { connector_id: connectorId, key_version: connector.keyVersion, host: url.host },
      'calling connector',
    );
    return this.http.fetch(url, { ...init, headers });
  }

  /** `ConnectorCaller.fetch` of src/digital-employees: the same as `connectorFetch`. */
  fetch(companyId: string, connectorId: string, path: string, init: RequestInit = {}): Promise<Response> {
    return this.connectorFetch(companyId, connectorId, path, init);
  }

  /**
   * The connector's base URL and current key, opened now, for clients that build their own requests. Rejects like
   * `connectorFetch` does before any network traffic.
   */
  async resolveConnectorCredentials(companyId: string, connectorId: string): Promise<ConnectorCredentials> {
    const { connector, apiKey } = await this.connectors.readCredentials(companyId, connectorId);
    return { baseUrl: connector.url, apiKey, keyVersion: connector.keyVersion, fetch: this.http.fetch };
  }

  /** `ConnectorCaller.credentials` of src/digital-employees: the same as `resolveConnectorCredentials`. */
  credentials(companyId: string, connectorId: string): Promise<ConnectorCredentials> {
    return this.resolveConnectorCredentials(companyId, connectorId);
  }

  /**
   * `GET {connector url}` with the current key; reports the status and latency. Network failures, an unset key and
   * a key that fails its integrity check are reported as `ok: false, status: 0` with an error code, never thrown;
   * only an unknown connector throws (404).
   */
  async check(companyId: string, connectorId: string): Promise<CheckResult> {
    // 404 before anything else; its version is what an unreadable or unset key is reported with.
    let keyVersion = (await this.connectors.get(companyId, connectorId)).keyVersion;
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let result: CheckResult;
    try {
      const { connector, apiKey } = await this.connectors.readCredentials(companyId, connectorId);
      keyVersion = connector.keyVersion;
      const response = await this.http.fetch(connector.url, {
        method: 'GET',
        headers: {
          accept: '*/*',
          'user-agent': 'Parley-connector-check/1',
          ...authHeaders(connector.type, apiKey),
        },
        timeoutMs: this.checkTimeoutMs,
      });
      const latency = elapsed();
      await response.body?.cancel().catch(() => {});
      result = { ok: response.ok, status: response.status, latency_ms: latency, key_version: keyVersion };
    } catch (err) {
      if (!isReportable(err)) throw err;
      if (err instanceof ConnectorKeyUnreadableError) {
        this.logger.error(
          { connector_id: connectorId, company_id: companyId },
          'stored connector key failed its integrity check',
        );
      }
      result = {
        ok: false,
        status: 0,
        latency_ms: elapsed(),
        key_version: keyVersion,
        error: err.code,
        detail: err.detail,
      };
    }
    this.logger.info(
      {
        connector_id: connectorId,
        company_id: companyId,
        ok: result.ok,
        status: result.status,
        latency_ms: result.latency_ms,
        key_version: result.key_version,
        error: result.error,
      },
      'connector checked',
    );
    return result;
  }
}

const isReportable = (err: unknown): err is AppError =>
  err instanceof OutboundError ||
  err instanceof ConnectorKeyNotSetError ||
  err instanceof ConnectorKeyUnreadableError;

function authHeaders(type: string, apiKey: string): Record<string, string> {
  const known = connectorType(type);
  if (!known)
    throw new OutboundError('connector_url_invalid', `Connector type ${type} is not known to this server.`);
  return known.authenticate(apiKey);
}

/**
 * `base` + relative `path`, keeping the base path (`https://h/v1` + `chat/completions` → `https://h/v1/chat/completions`).
 * An absolute or scheme-relative `path`, or one that leaves the base's origin, is refused: the key must only go
 * to the connector's own host.
 */
export function joinUrl(base: string, path: string): URL {
  const url = new URL(base);
  if (path === '') return url;
  if (/^[a-z][a-z0-9+.-]*:/i.test(path) || path.startsWith('//') || path.startsWith('\\')) {
    throw new OutboundError(
      'connector_url_invalid',
      'A connector path must be relative to the connector URL.',
    );
  }
  const [pathname, query] = path.split(/\?(.*)/s, 2) as [string, string | undefined];
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${pathname.replace(/^\/+/, '')}`;
  if (query !== undefined) url.search = query;
  if (url.origin !== new URL(base).origin) {
    throw new OutboundError('connector_url_invalid', 'A connector path must stay on the connector URL.');
  }
  return url;
}
