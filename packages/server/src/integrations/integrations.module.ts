import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit.service.ts';
import type { Config } from '../config/schema.ts';
import type { Sealer } from '../crypto/sealing.ts';
import type { Store } from '../storage/database.ts';
import type { EventRecorder } from '../webhooks/events.ts';
import { ConnectorsService } from './connectors.service.ts';
import { OutboundClient } from './outbound.ts';
import { type OutboundFetch, OutboundHttp } from './outbound-http.ts';

export interface Integrations {
  connectors: ConnectorsService;
  /** The one outbound client (also the `ConnectorCaller` the digital employees use). */
  outbound: OutboundClient;
  /** The outbound `fetch` itself (destination policy, time-outs, same-origin redirects), for event webhooks. */
  fetch: OutboundFetch;
  /** Drops the outbound keep-alive sockets. */
  close(): void;
}

/** Builds the connectors capability for one process (server or CLI) from the shared services. */
export function createIntegrations(deps: {
  config: Config;
  store: Store;
  sealer: Sealer;
  audit: AuditLog;
  logger: Logger;
  events: EventRecorder;
}): Integrations {
  const settings = deps.config.integrations;
  const connectors = new ConnectorsService(
    deps.store.db,
    deps.store.dialect,
    deps.sealer,
    deps.audit,
    deps.events,
  );
  const http = new OutboundHttp({
    blockPrivate: settings.outboundBlockPrivate,
    timeoutMs: settings.outboundTimeoutMs,
    maxRedirects: settings.outboundMaxRedirects,
  });
  const outbound = new OutboundClient(connectors, http, deps.logger, settings.checkTimeoutMs);
  return { connectors, outbound, fetch: http.fetch, close: () => http.close() };
}
