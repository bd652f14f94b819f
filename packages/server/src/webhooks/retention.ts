import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.ts';

/** How long the delivery log keeps finished deliveries (docs/webhooks.md "Deliveries"). */
export const DELIVERY_LOG_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Deletes deliveries that finished (`delivered` or `failed`) before `cutoffMs`, then the events no delivery refers
 * to any more. Pending deliveries and their events stay, however old: the retry rules decide their end. Idempotent,
 * so every node may run it.
 */
export async function pruneFinishedDeliveries(db: Kysely<Database>, cutoffMs: number): Promise<number> {
  const deleted = await db
    .deleteFrom('webhook_deliveries')
    .where('status', 'in', ['delivered', 'failed'])
    .where('created_ms', '<', cutoffMs)
    .executeTakeFirst();
  await db
    .deleteFrom('webhook_events')
    .where('created_ms', '<', cutoffMs)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('webhook_deliveries')
            .select('webhook_deliveries.id')
            .whereRef('webhook_deliveries.event_id', '=', 'webhook_events.id'),
        ),
      ),
    )
    .execute();
  return Number(deleted.numDeletedRows);
}
