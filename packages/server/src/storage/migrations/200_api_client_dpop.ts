import type { Kysely } from 'kysely';

/**
 * DPoP (RFC 9449) per API client (docs/machine-access.md "DPoP: sender-constrained tokens (RFC 9449)"): `optional` (a token request with a valid `DPoP`
 * proof gets a DPoP-bound token, one without gets a Bearer token) or `required` (a token request without a proof is
 * refused, RFC 9449 §5.2 `dpop_bound_access_tokens`). Every existing client stays `optional`, which changes nothing
 * for it. Proof `jti`s share `oauth_used_jtis` with client assertions (migration 140), under their own key prefix.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('api_clients')
    .addColumn('dpop', 'text', (c) => c.notNull().defaultTo('optional'))
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_clients').dropColumn('dpop').execute();
}
