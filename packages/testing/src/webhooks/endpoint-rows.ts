import { randomUUID } from 'node:crypto';
import { now } from '@parley/server/internal/storage/columns';
import type { Database } from '@parley/server/internal/storage/schema';
import type { Kysely } from 'kysely';

/**
 * An enabled webhook endpoint row for `conversation.created`, written straight into the store — behind the service's
 * back, as another node or a CLI command would, so a test can show what a node's cache does until it hears of it. Its
 * secret is a placeholder: nothing is delivered to it in these tests.
 */
export async function insertEndpointRow(db: Kysely<Database>, companyId: string): Promise<string> {
  const id = randomUUID();
  await db
    .insertInto('webhook_endpoints')
    .values({
      id,
      company_id: companyId,
      url: 'https://hooks.example/parley',
      events: JSON.stringify(['conversation.created']),
      description: null,
      secret_sealed: 'sealed',
      previous_secret_sealed: null,
      previous_secret_expires_ms: null,
      secret_version: 1,
      enabled: 1,
      failing_since_ms: null,
      created_at: now(),
      disabled_at: null,
    })
    .execute();
  return id;
}
