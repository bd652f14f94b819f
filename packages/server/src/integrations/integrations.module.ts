import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit.service.ts';
import type { Config } from '../config/schema.ts';
import type { Sealer } from '../crypto/sealing.ts';
import type { EventRecorder } from '../events/domain-events.ts';
import type { Store } from '../storage/database.ts';
import type { Tracing } from '../tracing/tracing.ts';
import { DestinationPolicy } from './address-policy.ts';
import { ConnectorsService } from './connectors.service.ts';
import { OutboundClient } from './outbound.ts';
import { type OutboundFetch, OutboundHttp } from './outbound-http.ts';

export interface Integrations {
  connectors: ConnectorsService;
  /** The one outbound client (also the `ConnectorCaller` the digital employees use). */
  outbound: OutboundClient;
  /** The outbound `fetch` itself (destination policy, time-outs, same-origin redirects), for event webhooks. */
  fetch: OutboundFetch;
  /** Where outbound calls may connect; URLs given as IP literals are judged by it when they are saved, too. */
  destinations: DestinationPolicy;
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
  tracing: Tracing;
}): Integrations {
  const settings = deps.config.integrations;
  const connectors = new ConnectorsService(
    deps.store.db,
    deps.store.dialect,
    deps.sealer,
    deps.audit,
    deps.events,
  );
  const destinations = new DestinationPolicy({
    blockPrivate: settings.outboundBlockPrivate,
    allow: settings.outboundAllow,
  });
  const http = new OutboundHttp({
    destinations,
    timeoutMs: settings.outboundTimeoutMs,
    maxRedirects: settings.outboundMaxRedirects,
    tracing: deps.tracing,
  });
  const outbound = new OutboundClient(connectors, http, deps.logger, settings.checkTimeoutMs);
  return { connectors, outbound, fetch: http.fetch, destinations, close: () => http.close() };
}
