import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit.service.ts';
import { SealError, type Sealer } from '../crypto/sealing.ts';
import type { OutboundFetch } from '../integrations/outbound-http.ts';
import { errorField, ThrottledWarnings } from '../logging/throttled-warnings.ts';
import { now } from '../storage/columns.ts';
import type { Dialect } from '../storage/database.ts';
import { clockMs } from '../storage/db-clock.ts';
import type { Database } from '../storage/schema.ts';
import { DELIVERY_LOG_RETENTION_MS, pruneFinishedDeliveries } from './retention.ts';
import { DISABLE_AFTER_MS, RETRY_WINDOW_MS, retryDelayMs } from './retry-schedule.ts';
import { signatureHeader, signingKeyOf } from './signature.ts';
import { webhookSecretAad } from './webhook-secret.ts';

export interface DispatcherOptions {
  /** This process's id: the owner of the deliveries it claims. */
  nodeId: string;
  /** Attempts in flight at once. Claims refill the free half at once, so each claim takes many rows. */
  concurrency: number;
  /** Idle wait between two looks for due deliveries. */
  pollMs: number;
  /** How long a claim lasts: a node that dies mid-attempt leaves the delivery to others after this. */
  leaseMs: number;
  /** An answer must arrive within this (docs/webhooks.md "Deliveries": any 2xx within 15 s is delivered). */
  timeoutMs: number;
  /** Added to every clock reading: tests move time forward (3 days of failures) without waiting. */
  clockOffsetMs?: () => number;
}

export interface DispatcherDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  sealer: Sealer;
  audit: AuditLog;
  logger: Logger;
  /** The connectors' outbound client (destination policy, time-outs; integrations/outbound-http.ts). */
  fetch: OutboundFetch;
  /** Told once an endpoint was disabled, so no node's cache still names it among the enabled (outbox.ts). */
  endpointsChanged?: (companyId: string) => Promise<void>;
}

/** A claimed delivery with what its attempt needs. */
interface Claimed {
  id: string;
  endpointId: string;
  companyId: string;
  eventId: string;
  url: string;
  body: string;
  /** Attempts made before this one. */
  attempts: number;
  windowStartMs: number;
  keys: Buffer[];
}

interface Outcome {
  delivery: Claimed;
  /** HTTP status; 0 when no answer arrived (network failure, time-out, blocked destination). */
  status: number;
}

const delivered = (o: Outcome) => o.status >= 200 && o.status < 300;

/**
 * Sends webhook deliveries: at least once, the same `webhook-id` on every attempt, one node per attempt in a
 * cluster. Due deliveries are claimed in batches with a lease kept in the store — `next_attempt_at` moves to the
 * lease's end and `lease_owner` names the node, in one statement (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so two
 * nodes never claim the same row; SQLite has one writer). The outcomes of many attempts are written back together
 * in one transaction. A node that dies mid-attempt loses nothing: its lease lapses and the delivery is due again.
 */
export class WebhookDispatcher {
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();
  private inFlight = 0;
  private wake: (() => void) | undefined;
  private outcomes: Outcome[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private writes: Promise<void> = Promise.resolve();
  /** One controller per attempt in flight (a shared signal would collect one listener per request). */
  private readonly attempts = new Set<AbortController>();
  /** When this node last pruned the delivery log (retention.ts); pruning runs at most hourly. */
  private lastPruneMs = 0;
  /**
   * Opened signing keys by associated data and sealed envelope (a rotation changes the envelope, so nothing stale is
   * kept). The associated data is part of the key: an envelope moved to another endpoint or version must fail to
   * open there (webhook-secret.ts), not find the key it opened to elsewhere.
   */
  private readonly keyCache = new Map<string, Buffer>();
  /**
   * Claims run every `pollMs` (100 ms by default) and fail each time while the store is away: the first failure is
   * logged, then one summary per interval (logging/throttled-warnings.ts), not ten lines a second.
   */
  private readonly warnings: ThrottledWarnings;

  constructor(
    private readonly deps: DispatcherDeps,
    private readonly options: DispatcherOptions,
  ) {
    this.warnings = new ThrottledWarnings(deps.logger, { clock: () => this.nowMs() });
  }

  /** Starts sending. `alone`: no other process can hold leases (SQLite), so those of a previous process lapse now. */
  async start(options: { alone: boolean }): Promise<void> {
    if (this.running) return;
    if (options.alone) {
      await this.deps.db
        .updateTable('webhook_deliveries')
        .set({ next_attempt_at: this.dbNow(), lease_owner: null })
        .where('status', '=', 'pending')
        .where('lease_owner', 'is not', null)
        .execute();
    }
    this.running = true;
    this.loopDone = this.loop();
  }

  /**
   * Stops claiming; lets attempts in flight finish for up to `graceMs` (then aborts them: their leases lapse and
   * they are sent again later) and writes the outcomes that arrived.
   */
  async stop(graceMs = 0): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loopDone;
    const deadline = Date.now() + graceMs;
    while (this.inFlight > 0 && Date.now() < deadline) await sleep(10);
    for (const attempt of this.attempts) attempt.abort(new Error('webhook dispatcher stopped'));
    while (this.inFlight > 0) await sleep(5);
    await this.flush();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      this.pruneNowAndThen();
      const free = this.options.concurrency - this.inFlight;
      let claimed = 0;
      if (free >= this.refillAt()) {
        try {
          claimed = await this.claimAndSend(free);
        } catch (err) {
          this.warnings.warn({ err: errorField(err) }, 'could not claim webhook deliveries');
        }
      }
      // A full claim means more may be due right now; otherwise wait for the next look or a free slot.
      if (!this.running || (claimed > 0 && claimed === free)) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.options.pollMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  /** Keeps the delivery log to its retention (finished deliveries older than 30 days go), hourly, in the background. */
  private pruneNowAndThen(): void {
    const now = this.nowMs();
    if (now - this.lastPruneMs < PRUNE_EVERY_MS) return;
    this.lastPruneMs = now;
    pruneFinishedDeliveries(this.deps.db, now - DELIVERY_LOG_RETENTION_MS).catch((err: unknown) =>
      this.deps.logger.warn(
        { err: { message: (err as Error).message } },
        'could not prune the webhook delivery log',
      ),
    );
  }

  /** Free slots worth a claim: half the concurrency (one query per many rows, never one per row under load). */
  private refillAt(): number {
    return Math.max(1, Math.floor(this.options.concurrency / 2));
  }

  private async claimAndSend(limit: number): Promise<number> {
    const due = this.deps.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', this.dbNow())
      .orderBy('next_attempt_at')
      .limit(limit);
    const rows = await this.deps.db
      .updateTable('webhook_deliveries')
      .set({ lease_owner: this.options.nodeId, next_attempt_at: this.dbNow(this.options.leaseMs) })
      .where('id', 'in', this.deps.dialect === 'postgres' ? due.forUpdate().skipLocked() : due)
      .where('status', '=', 'pending')
      .returning('id')
      .execute();
    if (rows.length === 0) return 0;
    const claimed = await this.load(rows.map((r) => r.id));
    for (const delivery of claimed) {
      this.inFlight++;
      void this.attempt(delivery).then((outcome) => {
        this.inFlight--;
        if (outcome) this.outcomes.push(outcome);
        this.scheduleFlush();
        if (this.options.concurrency - this.inFlight === this.refillAt()) this.wake?.();
      });
    }
    return rows.length;
  }

  /** The claimed deliveries with their event's body, their endpoint's URL and the keys that sign now. */
  private async load(ids: string[]): Promise<Claimed[]> {
    const rows = await this.deps.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
      .innerJoin('webhook_endpoints as p', 'p.id', 'd.endpoint_id')
      .select([
        'd.id',
        'd.endpoint_id',
        'd.event_id',
        'd.attempts',
        'd.window_start_ms',
        'e.body',
        'p.url',
        'p.company_id',
        'p.secret_sealed',
        'p.secret_version',
        'p.previous_secret_sealed',
        'p.previous_secret_expires_ms',
      ])
      .where('d.id', 'in', ids)
      .execute();
    const nowMs = this.nowMs();
    return rows.map((r) => {
      const keys: Buffer[] = [];
      try {
        keys.push(this.key(r.secret_sealed, webhookSecretAad(r.company_id, r.endpoint_id, r.secret_version)));
        if (r.previous_secret_sealed && Number(r.previous_secret_expires_ms) > nowMs) {
          keys.push(
            this.key(
              r.previous_secret_sealed,
              webhookSecretAad(r.company_id, r.endpoint_id, r.secret_version - 1),
            ),
          );
        }
      } catch (err) {
        if (!(err instanceof SealError)) throw err;
        // Unsigned deliveries are never sent: the attempt fails (status 0) and is retried, as the log says why.
        this.deps.logger.error(
          { webhook_id: r.endpoint_id, company_id: r.company_id },
          'stored webhook secret failed its integrity check',
        );
        keys.length = 0;
      }
      return {
        id: r.id,
        endpointId: r.endpoint_id,
        companyId: r.company_id,
        eventId: r.event_id,
        url: r.url,
        body: r.body,
        attempts: r.attempts,
        windowStartMs: Number(r.window_start_ms),
        keys,
      };
    });
  }

  /** One POST; `undefined` when the dispatcher stopped mid-attempt (its lease lapses; it is sent again). */
  private async attempt(delivery: Claimed): Promise<Outcome | undefined> {
    if (delivery.keys.length === 0) return { delivery, status: 0 };
    const timestamp = Math.floor(this.nowMs() / 1000);
    const controller = new AbortController();
    this.attempts.add(controller);
    try {
      const response = await this.deps.fetch(delivery.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Parley-Webhooks/1',
          'webhook-id': delivery.eventId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(delivery.keys, delivery.eventId, timestamp, delivery.body),
        },
        body: delivery.body,
        // A redirect is an answer other than 2xx: retried, never followed (the body is for this URL only).
        redirect: 'manual',
        timeoutMs: this.options.timeoutMs,
        signal: controller.signal,
      });
      await response.body?.cancel().catch(() => {});
      return { delivery, status: response.status };
    } catch (err) {
      if (controller.signal.aborted) return undefined;
      this.deps.logger.info(
        { webhook_id: delivery.endpointId, delivery_id: delivery.id, code: (err as { code?: string }).code },
        'webhook delivery attempt failed',
      );
      return { delivery, status: 0 };
    } finally {
      this.attempts.delete(controller);
    }
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.flush();
    }, 5);
  }

  /** Writes the outcomes gathered so far, one transaction at a time. */
  private flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const batch = this.outcomes.splice(0);
    if (batch.length > 0) {
      this.writes = this.writes
        .then(() => this.write(batch))
        .catch((err) =>
          // Their leases lapse and they are sent again: at least once.
          this.warnings.warn(
            { err: errorField(err), count: batch.length },
            'could not record webhook delivery outcomes',
          ),
        );
    }
    return this.writes;
  }

  private async write(batch: Outcome[]): Promise<void> {
    const nowMs = this.nowMs();
    const node = this.options.nodeId;
    const succeeded = batch.filter(delivered);
    const failed = batch.filter((o) => !delivered(o));
    await this.deps.db.transaction().execute(async (trx) => {
      // Lock order, the same in every transaction that touches both tables: the endpoint row first, then its
      // deliveries — as deleting an endpoint does (its row, then the deliveries through ON DELETE CASCADE) and as
      // disabling one does. Updating the deliveries first and the endpoint after (the old order here) could deadlock
      // with a delete on PostgreSQL (40P01). NO KEY UPDATE: the lock the `failing_since_ms` update takes anyway, which
      // does not block the outbox inserting deliveries for the endpoint (FOR KEY SHARE). SQLite has one writer.
      const endpoints = [...new Set(batch.map((o) => o.delivery.endpointId))].sort();
      if (this.deps.dialect === 'postgres' && endpoints.length > 0) {
        await trx
          .selectFrom('webhook_endpoints')
          .select('id')
          .where('id', 'in', endpoints)
          .orderBy('id')
          .forNoKeyUpdate()
          .execute();
      }
      for (const [status, ids] of groupIds(succeeded)) {
        await trx
          .updateTable('webhook_deliveries')
          .set((eb) => ({
            status: 'delivered',
            attempts: eb('attempts', '+', 1),
            last_status_code: status,
            next_attempt_at: null,
            lease_owner: null,
          }))
          .where('id', 'in', ids)
          .where('lease_owner', '=', node)
          .execute();
      }
      for (const { delivery, status } of failed) {
        const expired = nowMs - delivery.windowStartMs >= RETRY_WINDOW_MS;
        await trx
          .updateTable('webhook_deliveries')
          .set((eb) => ({
            status: expired ? 'failed' : 'pending',
            attempts: eb('attempts', '+', 1),
            last_status_code: status,
            next_attempt_at: expired ? null : this.dbNow(retryDelayMs(delivery.attempts + 1)),
            lease_owner: null,
          }))
          .where('id', '=', delivery.id)
          .where('lease_owner', '=', node)
          .execute();
      }
      const failing = endpointsOf(failed);
      if (failing.length > 0) {
        await trx
          .updateTable('webhook_endpoints')
          .set({ failing_since_ms: nowMs })
          .where('id', 'in', failing)
          .where('failing_since_ms', 'is', null)
          .execute();
      }
      // Any 2xx ends the endpoint's run of failures (even beside a failure in the same batch).
      const answering = endpointsOf(succeeded);
      if (answering.length > 0) {
        await trx
          .updateTable('webhook_endpoints')
          .set({ failing_since_ms: null })
          .where('id', 'in', answering)
          .where('failing_since_ms', 'is not', null)
          .execute();
      }
    });
    await this.disableLongFailing(endpointsOf(failed), nowMs);
  }

  /** Endpoints failing continuously for 3 days are disabled, their pending deliveries failed, with an audit event. */
  private async disableLongFailing(endpointIds: string[], nowMs: number): Promise<void> {
    if (endpointIds.length === 0) return;
    const due = await this.deps.db
      .selectFrom('webhook_endpoints')
      .select(['id', 'company_id', 'failing_since_ms'])
      .where('id', 'in', endpointIds)
      .where('enabled', '=', 1)
      .where('failing_since_ms', '<=', nowMs - DISABLE_AFTER_MS)
      .execute();
    for (const endpoint of due) {
      await this.deps.db.transaction().execute(async (trx) => {
        const result = await trx
          .updateTable('webhook_endpoints')
          .set({ enabled: 0, disabled_at: now() })
          .where('id', '=', endpoint.id)
          .where('enabled', '=', 1)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) return;
        await trx
          .updateTable('webhook_deliveries')
          .set({ status: 'failed', next_attempt_at: null, lease_owner: null })
          .where('endpoint_id', '=', endpoint.id)
          .where('status', '=', 'pending')
          .execute();
        await this.deps.audit.record(
          {
            type: 'webhook.disabled',
            companyId: endpoint.company_id,
            actor: 'system',
            subject: endpoint.id,
            details: { failing_since: new Date(Number(endpoint.failing_since_ms)).toISOString() },
          },
          trx,
        );
      });
      await this.deps.endpointsChanged?.(endpoint.company_id);
      this.deps.logger.warn(
        { webhook_id: endpoint.id, company_id: endpoint.company_id },
        'webhook disabled after failing for 3 days',
      );
    }
  }

  private key(sealed: string, associatedData: string): Buffer {
    const cacheKey = `${associatedData}\n${sealed}`;
    let key = this.keyCache.get(cacheKey);
    if (!key) {
      key = signingKeyOf(this.deps.sealer.open(sealed, associatedData));
      if (this.keyCache.size >= 1000) this.keyCache.delete(this.keyCache.keys().next().value!);
      this.keyCache.set(cacheKey, key);
    }
    return key;
  }

  private offset(): number {
    return this.options.clockOffsetMs?.() ?? 0;
  }

  /** The database clock (db-clock.ts), plus the injected offset and `plusMs`. */
  private dbNow(plusMs = 0) {
    return clockMs(this.deps.dialect, this.offset() + plusMs);
  }

  /** This process's clock with the injected offset, for 24 h / 3 day spans (seconds of skew do not matter there). */
  private nowMs(): number {
    return Date.now() + this.offset();
  }
}

function groupIds(outcomes: Outcome[]): Map<number, string[]> {
  const groups = new Map<number, string[]>();
  for (const { delivery, status } of outcomes) {
    const ids = groups.get(status) ?? [];
    ids.push(delivery.id);
    groups.set(status, ids);
  }
  return groups;
}

const endpointsOf = (outcomes: Outcome[]): string[] => [
  ...new Set(outcomes.map((o) => o.delivery.endpointId)),
];

const PRUNE_EVERY_MS = 60 * 60 * 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
