import { randomBytes } from 'node:crypto';
import type { CompiledQuery, Kysely } from 'kysely';
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

/**
 * The transactional outbox of webhook events. `record` runs inside the transaction of the change it reports: it
 * stores the event and one pending delivery per enabled endpoint of the company subscribed to its type, so the
 * event exists exactly when the change does, and a crash right after the commit loses nothing (the dispatcher
 * finds the deliveries in the store). An event no endpoint subscribes to is not stored: nothing would read it.
 */
export class WebhookOutbox implements EventRecorder {
  private enabledEndpoints: ((args: { company_id: string }) => CompiledQuery) | undefined;

  constructor(private readonly dialect: Dialect) {}

  async record(trx: Kysely<Database>, event: DomainEvent): Promise<void> {
    // Compiled once (storage/compiled.ts): this runs with every message and every completed reply.
    this.enabledEndpoints ??= compileOnce<{ company_id: string }>((arg) =>
      trx
        .selectFrom('webhook_endpoints')
        .select(['id', 'events'])
        .where('company_id', '=', arg('company_id'))
        .where('enabled', '=', 1),
    );
    const { rows: endpoints } = await trx.executeQuery<{ id: string; events: string }>(
      this.enabledEndpoints({ company_id: event.companyId }),
    );
    const subscribed = endpoints.filter((e) => (JSON.parse(e.events) as string[]).includes(event.type));
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
    const due = clockMs(this.dialect);
    await trx
      .insertInto('webhook_deliveries')
      .values(
        subscribed.map((endpoint) => ({
          id: `dlv_${randomBytes(12).toString('base64url')}`,
          endpoint_id: endpoint.id,
          event_id: id,
          company_id: event.companyId,
          type: event.type,
          status: 'pending',
          attempts: 0,
          last_status_code: null,
          next_attempt_at: due,
          lease_owner: null,
          window_start_ms: due,
          created_ms: due,
        })),
      )
      .execute();
  }
}
