import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit.service.ts';
import type { CompanyCache } from '../companies/company-cache.ts';
import type { Sealer } from '../crypto/sealing.ts';
import type { DestinationPolicy } from '../integrations/address-policy.ts';
import type { OutboundFetch } from '../integrations/outbound-http.ts';
import type { Store } from '../storage/database.ts';
import { WebhookDispatcher } from './dispatcher.ts';
import { WebhooksService } from './webhooks.service.ts';

export interface Webhooks {
  service: WebhooksService;
  /** Starts sending (a serving process only; CLI commands never send). */
  serve(): Promise<void>;
  /** Stops claiming and lets attempts in flight finish for up to `graceMs`. */
  drain(graceMs: number): Promise<void>;
}

/** Claims last this long: longer than the 15 s an attempt may take, so a live node never loses one mid-attempt. */
const LEASE_MS = 60_000;
const ANSWER_TIMEOUT_MS = 15_000;

/** Builds the webhooks capability for one process from the shared services (context.ts). */
export function createWebhooks(deps: {
  store: Store;
  sealer: Sealer;
  audit: AuditLog;
  logger: Logger;
  /** The connectors' outbound client (integrations/outbound-http.ts). */
  fetch: OutboundFetch;
  /** Its destination policy, which judges an endpoint URL's IP literal when the endpoint is saved. */
  destinations: DestinationPolicy;
  /** The node's company cache, which keeps each company's enabled endpoints for the outbox (outbox.ts). */
  companyCache: Pick<CompanyCache, 'invalidate'>;
}): Webhooks {
  const { store } = deps;
  const endpointsChanged = (companyId: string) => deps.companyCache.invalidate(companyId);
  const service = new WebhooksService(
    store.db,
    store.dialect,
    deps.sealer,
    deps.audit,
    deps.destinations,
    endpointsChanged,
  );
  const dispatcher = new WebhookDispatcher(
    {
      db: store.db,
      dialect: store.dialect,
      sealer: deps.sealer,
      audit: deps.audit,
      logger: deps.logger.child({ module: 'webhooks' }),
      fetch: deps.fetch,
      endpointsChanged,
    },
    {
      nodeId: randomBytes(9).toString('base64url'),
      concurrency: 128,
      pollMs: 100,
      leaseMs: LEASE_MS,
      timeoutMs: ANSWER_TIMEOUT_MS,
    },
  );
  return {
    service,
    // SQLite serves one process: whatever a previous process had claimed is due again at once.
    serve: () => dispatcher.start({ alone: store.dialect === 'sqlite' }),
    drain: (graceMs) => dispatcher.stop(graceMs),
  };
}
