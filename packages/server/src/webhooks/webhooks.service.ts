import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import type { WebhookBacklogView, WebhookDeliveryView } from '@parley/wire-types';
import type { Kysely } from 'kysely';
import type { AuditLog } from '../audit/audit.service.ts';
import { isUuid } from '../companies/companies.service.ts';
import type { Sealer } from '../crypto/sealing.ts';
import { type EventType, isEventType } from '../events/domain-events.ts';
import type { DestinationPolicy } from '../integrations/address-policy.ts';
import { validateUrl } from '../integrations/connector-validation.ts';
import { now, toBool } from '../storage/columns.ts';
import type { Dialect } from '../storage/database.ts';
import { clockMs } from '../storage/db-clock.ts';
import type { Database } from '../storage/schema.ts';
import { newWebhookSecret } from './signature.ts';
import { webhookSecretAad } from './webhook-secret.ts';
import {
  DeliveryNotFoundError,
  InvalidWebhookError,
  WebhookDisabledError,
  WebhookNotFoundError,
} from './webhooks.errors.ts';
import type { WebhookEndpointsTable } from './webhooks.tables.ts';

/** How long the previous secret keeps signing beside a new one (docs/webhooks.md "Secret rotation"). */
export const PREVIOUS_SECRET_MS = 24 * 60 * 60 * 1000;
export const DESCRIPTION_MAX = 500;
export const DELIVERIES_PAGE_MAX = 100;

/** An endpoint as readers see it: never its secret. */
export interface Webhook {
  id: string;
  url: string;
  events: EventType[];
  description: string | null;
  enabled: boolean;
  created_at: string;
  disabled_at: string | null;
}

/** One delivery as the portal, the platform API and the CLI list it. */
export type Delivery = WebhookDeliveryView;

/** What creating a webhook answers, in the platform API and the CLI alike: the endpoint and, this once, its secret. */
export const createdWebhookView = ({ webhook, secret }: { webhook: Webhook; secret: string }) => ({
  id: webhook.id,
  url: webhook.url,
  events: webhook.events,
  description: webhook.description,
  secret,
});

/** Who acts, as the audit log names them: `client:<id>`, `user:<id>` or `cli`. */
export interface WebhookActor {
  actor: string;
  ip?: string;
}

export interface NewWebhook {
  url: string;
  events: readonly string[];
  description?: string | null;
}

/** The deliveries not yet made and the endpoints in trouble (Settings → System). */
export type WebhookBacklog = WebhookBacklogView;

/**
 * A company's webhook endpoints: create (the secret is shown once), list, delete, rotate the secret, list and
 * retry deliveries. Used alike by the platform API, the portal and the CLI; every change is audited in its own
 * transaction. The URL follows the connectors' outbound policy (integrations/connector-validation.ts; an IP literal
 * the destination policy refuses is refused here already, names are judged on every call by the outbound client).
 */
export class WebhooksService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly sealer: Sealer,
    private readonly audit: AuditLog,
    private readonly destinations: DestinationPolicy,
    /**
     * Told after a change of the company's endpoints committed and before it is answered: the company cache's
     * `invalidate` (the outbox keeps the enabled endpoints there: outbox.ts), which also tells the other nodes.
     */
    private readonly endpointsChanged: (companyId: string) => Promise<void> = async () => {},
  ) {}

  async create(
    companyId: string,
    input: NewWebhook,
    actor: WebhookActor,
  ): Promise<{ webhook: Webhook; secret: string }> {
    const url = this.validUrl(input.url);
    const events = validEvents(input.events);
    const description = validDescription(input.description);
    const id = randomUUID();
    const secret = newWebhookSecret();
    const row: WebhookEndpointsTable = {
      id,
      company_id: companyId,
      url,
      events: JSON.stringify(events),
      description,
      secret_sealed: this.sealer.seal(secret, webhookSecretAad(companyId, id, 1)),
      previous_secret_sealed: null,
      previous_secret_expires_ms: null,
      secret_version: 1,
      enabled: 1,
      failing_since_ms: null,
      created_at: now(),
      disabled_at: null,
    };
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('webhook_endpoints').values(row).execute();
      await this.audit.record(
        {
          type: 'webhook.created',
          companyId,
          actor: actor.actor,
          subject: id,
          ip: actor.ip,
          details: { url, events },
        },
        trx,
      );
    });
    await this.endpointsChanged(companyId);
    return { webhook: toWebhook(row), secret };
  }

  async list(companyId: string): Promise<Webhook[]> {
    const rows = await this.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('company_id', '=', companyId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toWebhook);
  }

  /**
   * Deletes the endpoint with its deliveries (nothing more is sent, even an attempt already due). Locks the endpoint
   * row first and its deliveries after (ON DELETE CASCADE), the order every transaction touching both keeps
   * (dispatcher.ts `write`); should PostgreSQL still roll it back (40P01/40001), the caller gets 503
   * `store_unavailable` with `Retry-After` (storage/store-errors.ts) and can simply send the delete again.
   */
  async delete(companyId: string, id: string, actor: WebhookActor): Promise<void> {
    if (!isUuid(id)) throw new WebhookNotFoundError();
    await this.db.transaction().execute(async (trx) => {
      const result = await trx
        .deleteFrom('webhook_endpoints')
        .where('id', '=', id)
        .where('company_id', '=', companyId)
        .executeTakeFirst();
      if (Number(result.numDeletedRows) !== 1) throw new WebhookNotFoundError();
      await this.audit.record(
        { type: 'webhook.deleted', companyId, actor: actor.actor, subject: id, ip: actor.ip },
        trx,
      );
    });
    await this.endpointsChanged(companyId);
  }

  /**
   * A new secret, returned once; the current one becomes the previous secret and keeps signing beside it for 24 h
   * (a rotation within those 24 h drops the older previous one). A compare-and-set on the version serialises
   * concurrent rotations: the loser answers as if it came second.
   */
  async rotateSecret(companyId: string, id: string, actor: WebhookActor): Promise<string> {
    for (;;) {
      const row = await this.row(companyId, id);
      const secret = newWebhookSecret();
      const version = row.secret_version + 1;
      const changed = await this.db.transaction().execute(async (trx) => {
        const result = await trx
          .updateTable('webhook_endpoints')
          .set({
            secret_sealed: this.sealer.seal(secret, webhookSecretAad(companyId, id, version)),
            // Re-sealed under the previous version's associated data, which is what it now is.
            previous_secret_sealed: this.sealer.seal(
              this.sealer.open(row.secret_sealed, webhookSecretAad(companyId, id, row.secret_version)),
              webhookSecretAad(companyId, id, version - 1),
            ),
            previous_secret_expires_ms: clockMs(this.dialect, PREVIOUS_SECRET_MS),
            secret_version: version,
          })
          .where('id', '=', id)
          .where('secret_version', '=', row.secret_version)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) return false;
        await this.audit.record(
          {
            type: 'webhook.secret_rotated',
            companyId,
            actor: actor.actor,
            subject: id,
            ip: actor.ip,
            details: { secret_version: version },
          },
          trx,
        );
        return true;
      });
      if (changed) return secret;
    }
  }

  /**
   * The company's delivery backlog, for the system view: deliveries still pending (due or being sent), how long the
   * oldest has waited, and endpoints failing now or disabled.
   */
  async backlog(companyId: string): Promise<WebhookBacklog> {
    const pending = await this.db
      .selectFrom('webhook_deliveries')
      .where('company_id', '=', companyId)
      .where('status', '=', 'pending')
      .select([(eb) => eb.fn.countAll<number>().as('count'), (eb) => eb.fn.min('created_ms').as('oldest')])
      .executeTakeFirstOrThrow();
    const endpoints = await this.db
      .selectFrom('webhook_endpoints')
      .where('company_id', '=', companyId)
      .select(['enabled', 'failing_since_ms'])
      .execute();
    const oldest = pending.oldest === null ? null : Number(pending.oldest);
    return {
      pending: Number(pending.count),
      oldest_pending_at: oldest === null ? null : new Date(oldest).toISOString(),
      failing_endpoints: endpoints.filter((e) => toBool(e.enabled) && e.failing_since_ms !== null).length,
      disabled_endpoints: endpoints.filter((e) => !toBool(e.enabled)).length,
    };
  }

  /** The endpoint's deliveries, newest first. */
  async deliveries(companyId: string, id: string, limit = DELIVERIES_PAGE_MAX): Promise<Delivery[]> {
    await this.row(companyId, id);
    const rows = await this.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'event_id', 'type', 'status', 'attempts', 'last_status_code', 'next_attempt_at'])
      .where('endpoint_id', '=', id)
      .orderBy('created_ms', 'desc')
      .orderBy('id', 'desc')
      .limit(Math.min(Math.max(limit, 1), DELIVERIES_PAGE_MAX))
      .execute();
    return rows.map((r) => ({
      id: r.id,
      event_id: r.event_id,
      type: r.type,
      status: r.status as Delivery['status'],
      attempts: r.attempts,
      last_status_code: r.last_status_code,
      next_attempt_at:
        r.status === 'pending' && r.next_attempt_at !== null
          ? new Date(Number(r.next_attempt_at)).toISOString()
          : null,
    }));
  }

  /**
   * Sends the delivery again as soon as possible, whatever its status, with a new 24 h retry window; the same
   * `webhook-id` as before. A delivery being sent right now is left to that attempt. `webhook_disabled` when the
   * endpoint was disabled.
   */
  async retry(companyId: string, id: string, deliveryId: string): Promise<void> {
    const endpoint = await this.row(companyId, id);
    if (!toBool(endpoint.enabled)) throw new WebhookDisabledError();
    const result = await this.db
      .updateTable('webhook_deliveries')
      .set({
        status: 'pending',
        next_attempt_at: clockMs(this.dialect),
        window_start_ms: clockMs(this.dialect),
        lease_owner: null,
      })
      .where('id', '=', deliveryId)
      .where('endpoint_id', '=', id)
      // Not while a node is sending it (its lease runs): that attempt is the retry, and resetting the lease would
      // start a second one beside it.
      .where((eb) =>
        eb.or([eb('lease_owner', 'is', null), eb('next_attempt_at', '<=', clockMs(this.dialect))]),
      )
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 1) return;
    const inFlight = await this.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('id', '=', deliveryId)
      .where('endpoint_id', '=', id)
      .executeTakeFirst();
    if (!inFlight) throw new DeliveryNotFoundError();
  }

  /** The endpoint's row within the company; `webhook_not_found` otherwise (malformed ids are not looked up). */
  private async row(companyId: string, id: string): Promise<WebhookEndpointsTable> {
    const row = isUuid(id)
      ? await this.db
          .selectFrom('webhook_endpoints')
          .selectAll()
          .where('id', '=', id)
          .where('company_id', '=', companyId)
          .executeTakeFirst()
      : undefined;
    if (!row) throw new WebhookNotFoundError();
    return row;
  }

  private validUrl(value: string): string {
    const url = validateUrl(value);
    const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host) && this.destinations.refuses(host)) {
      throw new InvalidWebhookError('invalid_url', 'url', 'is an address the operator blocks');
    }
    return url;
  }
}

function validEvents(events: readonly string[]): EventType[] {
  if (!Array.isArray(events) || events.length === 0) {
    throw new InvalidWebhookError('invalid_events', 'events', 'must name at least one event type');
  }
  const unknown = events.filter((e) => typeof e !== 'string' || !isEventType(e));
  if (unknown.length > 0) {
    throw new InvalidWebhookError(
      'invalid_events',
      'events',
      `holds unknown event types (${unknown.slice(0, 5).map(String).join(', ')})`,
    );
  }
  return [...new Set(events as EventType[])];
}

function validDescription(value: string | null | undefined): string | null {
  const description = value?.trim() ?? '';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point.
  if (description.length > DESCRIPTION_MAX || /[\u0000-\u0008\u000b-\u001f\u007f]/.test(description)) {
    throw new InvalidWebhookError(
      'invalid_description',
      'description',
      `must be at most ${DESCRIPTION_MAX} characters without control characters`,
    );
  }
  return description === '' ? null : description;
}

function toWebhook(row: WebhookEndpointsTable): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as EventType[],
    description: row.description,
    enabled: toBool(row.enabled),
    created_at: row.created_at,
    disabled_at: row.disabled_at,
  };
}
