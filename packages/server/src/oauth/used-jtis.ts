import type { Kysely } from 'kysely';
import type { Store } from '../storage/database.ts';
import type { Database } from '../storage/schema.ts';

/**
 * Marks a `jti` as used, once across the cluster: `false` when any node used it before (the row's primary key
 * decides between nodes, on SQLite and PostgreSQL alike). Rows live until `expSeconds`, after which the token they
 * protect is refused anyway, and are then purged (oauth/revocation-list.ts). Keys carry a prefix per kind (client
 * assertions `client_id|jti`, DPoP proofs `dpop|jkt|jti`), so the kinds never collide. On SQLite the insert goes
 * through the store's group commit (packages/server/src/storage/group-commit.ts): the claims of grants arriving in
 * one event-loop turn share one commit instead of a commit each, and the answer still comes only once the row is
 * durable. PostgreSQL takes the single statement as is (a transaction around it would only add round trips).
 */
export async function claimJtiOnce(
  store: Pick<Store, 'db' | 'dialect' | 'writes'>,
  key: string,
  expSeconds: number,
): Promise<boolean> {
  const insert = (db: Kysely<Database>) =>
    db
      .insertInto('oauth_used_jtis')
      .values({ jti: key, expires_at: new Date(expSeconds * 1000).toISOString() })
      .onConflict((oc) => oc.column('jti').doNothing())
      .executeTakeFirst();
  const result = await (store.dialect === 'sqlite' ? store.writes.run(insert) : insert(store.db));
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}
