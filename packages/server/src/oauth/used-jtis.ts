import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.ts';

/**
 * Marks a `jti` as used, once across the cluster: `false` when any node used it before (the row's primary key
 * decides between nodes, on SQLite and PostgreSQL alike). Rows live until `expSeconds`, after which the token they
 * protect is refused anyway, and are then purged (oauth/revocation-list.ts). Keys carry a prefix per kind (client
 * assertions `client_id|jti`, DPoP proofs `dpop|jkt|jti`), so the kinds never collide.
 */
export async function claimJtiOnce(db: Kysely<Database>, key: string, expSeconds: number): Promise<boolean> {
  const result = await db
    .insertInto('oauth_used_jtis')
    .values({ jti: key, expires_at: new Date(expSeconds * 1000).toISOString() })
    .onConflict((oc) => oc.column('jti').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}
