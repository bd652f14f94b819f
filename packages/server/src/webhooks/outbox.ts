import { randomBytes } from 'node:crypto';
import { type CompiledQuery, type Kysely, type RawBuilder, sql } from 'kysely';
import type { CompanyCache } from '../companies/company-cache.ts';
import type { DomainEvent, EventRecorder } from '../events/domain-events.ts';
import { compileOnce } from '../storage/compiled.ts';
import type { Dialect } from '../storage/database.ts';
import { clockMs } from '../storage/db-clock.ts';
import type { Database } from '../storage/schema.ts';

/** `msg_` + 128 random bits: the event's id, its body's `id` and the `webhook-id` header of every attempt. */
export const newEventId = (): string => `msg_${randomBytes(16).toString('base64url')}`;

/** The delivery body (docs/webhooks.md "Events"): `{"id","type","created_at","company_id","data"}`. */
export function eventBody(id: string, event: DomainEvent, createdAt: string): string {
  return JSON.stringify({
    id,
    type: event.type,
    created_at: createdAt,
    company_id: event.companyId,
    data: event.data,
  });
}

/** An enabled endpoint of a company and the event types it subscribes to. */
interface EnabledEndpoint {
  id: string;
  events: readonly string[];
}

/** Where a company's enabled endpoints are kept between events: the node's company cache (see `WebhookOutbox`). */
export const ENDPOINTS_CACHE_KEY = 'webhook-endpoints';

/**
 * The transactional outbox of webhook events. `record` runs inside the transaction of the change it reports: it
 * stores the event and one pending delivery per enabled endpoint of the company subscribed to its type, so the
 * event exists exactly when the change does, and a crash right after the commit loses nothing (the dispatcher
 * finds the deliveries in the store). An event no endpoint subscribes to is not stored: nothing would read it.
 *
 * Which endpoints a company has enabled is asked with every conversation created and every message, and almost
 * never changes: with `cache`, the answer is kept in the node's company cache
 * (packages/server/src/companies/company-cache.ts), which webhooks.service.ts and dispatcher.ts invalidate after
 * every change of a company's endpoints committed and before it is answered, on this node and (over Redis) on every
 * other; an endpoint added is therefore in the answer of every event recorded after the add was answered.
 */
export class WebhookOutbox implements EventRecorder {
  private enabledEndpoints: ((args: { company_id: string }) => CompiledQuery) | undefined;

  constructor(
    private readonly dialect: Dialect,
    private readonly cache?: Pick<CompanyCache, 'get'>,
  ) {}

  async record(trx: Kysely<Database>, event: DomainEvent): Promise<void> {
    const subscribed = await this.subscribedEndpoints(trx, event);
    if (subscribed.length === 0) return;
    const id = newEventId();
    const createdMs = Date.now();
    await trx
      .insertInto('webhook_events')
      .values({
        id,
        company_id: event.companyId,
        type: event.type,
        body: eventBody(id, event, new Date(createdMs).toISOString()),
        created_ms: createdMs,
        // What an erasure (privacy/) finds the rows carrying a conversation's data by (migration 130).
        conversation_id: 'conversation_id' in event.data ? event.data.conversation_id : null,
      })
      .execute();
    await insertDeliveries(trx, { eventId: id, event, endpoints: subscribed, due: clockMs(this.dialect) });
  }

  async wouldRecord(db: Kysely<Database>, event: Pick<DomainEvent, 'type' | 'companyId'>): Promise<boolean> {
    return (await this.subscribedEndpoints(db, event)).length > 0;
  }

  /** The company's enabled endpoints subscribed to the event's type, from the cache or read with `db`. */
  private async subscribedEndpoints(
    db: Kysely<Database>,
    event: Pick<DomainEvent, 'type' | 'companyId'>,
  ): Promise<EnabledEndpoint[]> {
    const read = () => this.readEnabledEndpoints(db, event.companyId);
    const endpoints = this.cache
      ? ((await this.cache.get(event.companyId, ENDPOINTS_CACHE_KEY, read)) ?? [])
      : await read();
    return endpoints.filter((e) => e.events.includes(event.type));
  }

  /** Read with `trx`: the write's own transaction (on SQLite a read beside it would wait for it). */
  private async readEnabledEndpoints(trx: Kysely<Database>, companyId: string): Promise<EnabledEndpoint[]> {
    // Compiled once (storage/compiled.ts): without the cache this runs with every message and every completed reply.
    this.enabledEndpoints ??= compileOnce<{ company_id: string }>((arg) =>
      trx
        .selectFrom('webhook_endpoints')
        .select(['id', 'events'])
        .where('company_id', '=', arg('company_id'))
        .where('enabled', '=', 1),
    );
    const { rows } = await trx.executeQuery<{ id: string; events: string }>(
      this.enabledEndpoints({ company_id: companyId }),
    );
    return rows.map((row) => ({ id: row.id, events: JSON.parse(row.events) as string[] }));
  }
}

/**
 * One pending delivery per endpoint, for those of `endpoints` that still exist and are enabled: the list may come
 * from a node's cache that has not yet heard of a delete or a disable made a moment ago on another node (outbox.ts
 * `WebhookOutbox`), and a delivery must neither name an endpoint that is gone (its foreign key would fail the change
 * that records the event) nor go to one that is disabled.
 */
async function insertDeliveries(
  trx: Kysely<Database>,
  args: {
    eventId: string;
    event: DomainEvent;
    endpoints: readonly EnabledEndpoint[];
    due: RawBuilder<number>;
  },
): Promise<void> {
  const { eventId, event, endpoints, due } = args;
  const deliveryIds = sql.join(
    endpoints.map((e) => sql`when ${e.id} then ${`dlv_${randomBytes(12).toString('base64url')}`}`),
    sql` `,
  );
  // Parameters in a select list are cast: PostgreSQL cannot tell their type otherwise.
  await sql`insert into webhook_deliveries
      (id, endpoint_id, event_id, company_id, type, status, attempts, next_attempt_at, window_start_ms, created_ms)
    select case id ${deliveryIds} end, id, cast(${eventId} as text), cast(${event.companyId} as text),
      cast(${event.type} as text), 'pending', 0, cast(${due} as bigint), cast(${due} as bigint), cast(${due} as bigint)
    from webhook_endpoints
    where id in (${sql.join(endpoints.map((e) => e.id))}) and enabled = 1`.execute(trx);
}
