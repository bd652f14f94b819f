import type { Kysely } from 'kysely';

/**
 * Per-client quotas (docs/machine-access.md "Quotas"): token requests and API calls per minute for one API client.
 * `null` means the deployment's default (`PARLEY_TOKENS_PER_MINUTE`, `PARLEY_API_CALLS_PER_MINUTE`), so a changed
 * default reaches every client that was never given its own.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_clients').addColumn('tokens_per_minute', 'integer').execute();
  await db.schema.alterTable('api_clients').addColumn('api_calls_per_minute', 'integer').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_clients').dropColumn('api_calls_per_minute').execute();
  await db.schema.alterTable('api_clients').dropColumn('tokens_per_minute').execute();
}
