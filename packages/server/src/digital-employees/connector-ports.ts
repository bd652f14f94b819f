/**
 * What the digital employees need from connectors (src/integrations/), kept to two narrow ports so this folder
 * depends on behaviour, not on the connectors' storage. `ConnectorsService` is a ConnectorDirectory and
 * `OutboundClient` a ConnectorCaller, structurally.
 */

/** Looks a connector up within one company; a connector of another company is `undefined`, like a missing one. */
export interface ConnectorDirectory {
  find(companyId: string, connectorId: string): Promise<{ id: string; type: string } | undefined>;
}

/** A `fetch` that also takes a per-call inactivity limit (the outbound client's). */
export type ConnectorFetch = (
  input: string | URL | Request,
  init?: RequestInit & { timeoutMs?: number },
) => Promise<Response>;

/**
 * The outbound side: a connector's base URL and its *current* API key, read at call time so a rotation takes
 * effect on the very next call (docs/design.md "Connector key rotation").
 */
export interface ConnectorCaller {
  /** Sends `init` to the connector's URL (+ relative `path`) with `Authorization: Bearer <current key>`. */
  fetch(
    companyId: string,
    connectorId: string,
    path: string,
    init: RequestInit & { timeoutMs?: number },
  ): Promise<Response>;
  /**
   * The base URL and current key, for clients that build their own requests (the `openai` package), plus the
   * outbound `fetch` those clients should use so their calls follow the same destination policy and limits.
   */
  credentials(
    companyId: string,
    connectorId: string,
  ): Promise<{ baseUrl: string; apiKey: string; fetch?: ConnectorFetch }>;
}
