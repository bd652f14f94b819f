import type { GroupCommit } from '../storage/group-commit.ts';

/**
 * Marks a `jti` as used, once across the cluster: `false` when any node used it before (the row's primary key
 * decides between nodes, on SQLite and PostgreSQL alike). Rows live until `expSeconds`, after which the token they
 * protect is refused anyway, and are then purged (oauth/revocation-list.ts). Keys carry a prefix per kind (client
 * assertions `client_id|jti`, DPoP proofs `dpop|jkt|jti`), so the kinds never collide. The insert goes through the
 * store's group commit (packages/server/src/storage/group-commit.ts): on SQLite the claims of grants arriving in one
 * event-loop turn share one commit instead of a commit each; the answer still comes only once the row is durable.
 */
export async function claimJtiOnce(writes: GroupCommit, key: string, expSeconds: number): Promise<boolean> {
  const result = await writes.run((trx) =>
    trx
      .insertInto('oauth_used_jtis')
      .values({ jti: key, expires_at: new Date(expSeconds * 1000).toISOString() })
      .onConflict((oc) => oc.column('jti').doNothing())
      .executeTakeFirst(),
  );
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}
