import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit.service.ts';
import type { EventRecorder } from '../events/domain-events.ts';
import type { Scheduler } from '../jobs/scheduler.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { Store } from '../storage/database.ts';
import { type PrivacyDeps, PrivacyService } from './privacy.service.ts';
import { RetentionSettingsStore, RetentionSweeper } from './retention.ts';

export interface Privacy {
  service: PrivacyService;
  retention: RetentionSettingsStore;
}

export interface PrivacyModuleDeps {
  store: Pick<Store, 'db' | 'dialect'>;
  realtime: PrivacyDeps['realtime'];
  attachments: PrivacyDeps['attachments'];
  audit: AuditLog;
  events: EventRecorder;
  logger: Pick<Logger, 'warn'>;
  /** Counts what the retention sweep deleted. */
  metrics: Pick<Metrics, 'retentionDeleted'>;
  scheduler: Pick<Scheduler, 'add'>;
  /** `webchat.erasureLatePublishMs`: when an erasure removes its realtime history once more. */
  latePublishMs: number;
}

/** Builds erasure, export and retention (docs/privacy.md) and adds the retention sweep to the scheduled jobs. */
export function createPrivacy(deps: PrivacyModuleDeps): Privacy {
  const service = new PrivacyService({
    db: deps.store.db,
    dialect: deps.store.dialect,
    realtime: deps.realtime,
    attachments: deps.attachments,
    audit: deps.audit,
    events: deps.events,
    logger: deps.logger,
    latePublishMs: deps.latePublishMs,
  });
  deps.scheduler.add(
    new RetentionSweeper({
      db: deps.store.db,
      dialect: deps.store.dialect,
      privacy: service,
      onDeleted: (kind, count) => deps.metrics.retentionDeleted.inc({ kind }, count),
    }),
  );
  return { service, retention: new RetentionSettingsStore(deps.store.db) };
}
