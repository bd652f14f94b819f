import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { FinishedQuery } from '../storage/database.ts';
import { PARLEY_REALTIME_NAMES, type RealtimeMetrics, registerRealtimeMetrics } from './realtime-metrics.ts';

/** Prefix of the process figures (CPU, memory, event-loop delay, GC): `parley_process_cpu_seconds_total`, … */
export const PROCESS_PREFIX = 'parley_';

/** Seconds buckets for request, query and reply latencies: 1 ms to 60 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * The process's Prometheus metrics (docs/operations.md "Metrics"), built once by the composition root and handed to
 * the capabilities that report into them. Every label takes its values from a closed set — route templates (never
 * paths), HTTP methods and statuses, OAuth error codes, command methods, responder error codes — so no input can
 * add series (the cardinality tests in metrics.test.ts send 1,000 distinct ids and paths).
 */
/** The children of a histogram labelled `outcome`, one per outcome. */
interface OutcomeChildren {
  ok: ReturnType<Histogram<'outcome'>['labels']>;
  error: ReturnType<Histogram<'outcome'>['labels']>;
}

export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'parley_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'parley_http_request_duration_seconds',
    help: 'Time from the request arriving to its response being sent, by method and route template.',
    labelNames: ['method', 'route'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly httpRefused = new Counter({
    name: 'parley_http_connections_refused_total',
    help: 'Connections the HTTP edge refused or cut: too_many_connections (per-address cap), request_timeout (a body that did not arrive in time).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly jobRuns = new Counter({
    name: 'parley_job_runs_total',
    help: 'Runs of scheduled jobs this node made (jobs/scheduler.ts), by job and outcome: completed, failed, lease_lost.',
    labelNames: ['job', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly attachmentsSwept = new Counter({
    name: 'parley_attachments_swept_total',
    help: 'What the attachment sweeper deleted: unsent_attachment (an upload no message named in time, with its blob), unowned_blob (a blob whose attachment row was gone).',
    labelNames: ['what'] as const,
    registers: [this.registry],
  });
  readonly retentionDeleted = new Counter({
    name: 'parley_retention_deleted_total',
    help: 'Rows the retention sweep (privacy/retention.ts) deleted, by kind: conversation, message, webhook_delivery, webhook_event, audit_event.',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly tokenGrants = new Counter({
    name: 'parley_oauth_token_grants_total',
    help: 'Access tokens issued by the token endpoint.',
    registers: [this.registry],
  });
  readonly tokenRefusals = new Counter({
    name: 'parley_oauth_token_refusals_total',
    help: 'Token requests refused, by OAuth error code (RFC 6749 §5.2, slow_down, temporarily_unavailable).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly storeQueryDuration = new Histogram({
    name: 'parley_store_query_duration_seconds',
    help: 'Database statements run through the query builder, by outcome.',
    labelNames: ['outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly brokerPublishDuration = new Histogram({
    name: 'parley_broker_publish_duration_seconds',
    help: 'Server-side publications to the realtime broker (memory or Redis), by outcome.',
    labelNames: ['outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly replyFirstToken = new Histogram({
    name: 'parley_webchat_reply_first_token_seconds',
    help: "Time from a digital employee's reply starting to its first streamed text.",
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly replyDuration = new Histogram({
    name: 'parley_webchat_reply_duration_seconds',
    help: "Time from a digital employee's reply starting to its end, by outcome (completed or the error code).",
    labelNames: ['outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly responderErrors = new Counter({
    name: 'parley_webchat_responder_errors_total',
    help: 'Replies that ended with an error block, by documented code (docs/errors.md "Webchat").',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  private countQueuedReplies: (() => Promise<number>) | undefined;
  readonly queuedReplies: Gauge = new Gauge({
    name: 'parley_webchat_queued_replies',
    help: 'Visitor messages waiting for or getting a reply (reply jobs), all nodes together.',
    registers: [this.registry],
    collect: async () => {
      if (this.countQueuedReplies === undefined) return;
      // A store outage must not fail the whole scrape: the gauge reads NaN until the store answers again.
      this.queuedReplies.set(await this.countQueuedReplies().catch(() => Number.NaN));
    },
  });
  private readonly outcomeChildren = new Map<Histogram<'outcome'>, OutcomeChildren>();
  private readonly queryOk = this.storeQueryDuration.labels('ok');
  private readonly queryFailed = this.storeQueryDuration.labels('error');
  /** The webchat engine's connections, subscriptions, channels, commands and frames. */
  readonly realtime: RealtimeMetrics;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: PROCESS_PREFIX });
    this.realtime = registerRealtimeMetrics(this.registry, PARLEY_REALTIME_NAMES);
  }

  /** The queued-replies gauge reads `count` at every scrape. */
  watchQueuedReplies(count: () => Promise<number>): void {
    this.countQueuedReplies = count;
  }

  /** One database statement (the store's query hook, storage/database.ts). */
  storeQuery(query: FinishedQuery): void {
    (query.failed ? this.queryFailed : this.queryOk).observe((query.endedAt - query.startedAt) / 1000);
  }

  /** The Prometheus text exposition of every metric (scrape-time collectors run here). */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Times an operation into a histogram labelled `outcome` = ok | error. */
  async timed<T>(histogram: Histogram<'outcome'>, operation: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const outcomes = this.outcomesOf(histogram);
    let child = outcomes.error;
    try {
      const result = await operation();
      child = outcomes.ok;
      return result;
    } finally {
      child.observe((performance.now() - started) / 1000);
    }
  }

  /**
   * A histogram's two `outcome` children, looked up once: `labels()` hashes its arguments on every call, and
   * `timed` runs for every envelope a reply streams (profiled: 1.6 % of a burst's CPU with the lookup per call).
   */
  private outcomesOf(histogram: Histogram<'outcome'>): OutcomeChildren {
    let children = this.outcomeChildren.get(histogram);
    if (children === undefined) {
      children = { ok: histogram.labels('ok'), error: histogram.labels('error') };
      this.outcomeChildren.set(histogram, children);
    }
    return children;
  }
}
