import { type Kysely, sql } from 'kysely';
import { ID, JSON_TEXT, TIMESTAMP } from '../columns.ts';

/**
 * Machine access, third round (docs/machine-access.md):
 * - `api_client_secrets`: a client may hold several secrets at once, so a secret can be rotated with an overlap
 *   (the old one keeps working until `expires_at` or `revoked_at`). Each existing client's digest moves here as its
 *   first secret; `api_clients.secret_digest` stays only as a legacy column (no longer read).
 * - `api_clients.auth_method`: `client_secret` (Basic or body) or `private_key_jwt` (RFC 7523 §2.2) with the
 *   client's public keys in `jwks` or at `jwks_uri`.
 * - `oauth_revoked_tokens`: access tokens revoked before they expire (RFC 7009), by `jti`, kept until `expires_at`.
 * - `oauth_used_jtis`: `jti`s of client assertions seen (single use, RFC 7523 §3 rule 7), kept until they expire.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('api_client_secrets')
    .addColumn('id', ID, (c) => c.primaryKey())
    .addColumn('client_id', ID, (c) => c.notNull().references('api_clients.id'))
    .addColumn('digest', 'text', (c) => c.notNull())
    .addColumn('pepper_version', 'integer', (c) => c.notNull())
    .addColumn('hint', 'text', (c) => c.notNull())
    .addColumn('created_at', TIMESTAMP, (c) => c.notNull())
    .addColumn('expires_at', TIMESTAMP)
    .addColumn('revoked_at', TIMESTAMP)
    .addColumn('last_used_at', TIMESTAMP)
    .execute();
  await db.schema
    .createIndex('api_client_secrets_client')
    .on('api_client_secrets')
    .columns(['client_id', 'created_at'])
    .execute();
  // Every existing client keeps its secret: same digest, same pepper, id derived from the client id.
  await sql`insert into api_client_secrets (id, client_id, digest, pepper_version, hint, created_at, last_used_at)
    select 'psk_' || substr(id, 5), id, secret_digest, pepper_version, secret_hint, created_at, last_used_at
    from api_clients`.execute(db);

  await db.schema
    .alterTable('api_clients')
    .addColumn('auth_method', 'text', (c) => c.notNull().defaultTo('client_secret'))
    .execute();
  await db.schema.alterTable('api_clients').addColumn('jwks', JSON_TEXT).execute();
  await db.schema.alterTable('api_clients').addColumn('jwks_uri', 'text').execute();

  await db.schema
    .createTable('oauth_revoked_tokens')
    .addColumn('jti', 'text', (c) => c.primaryKey())
    .addColumn('company_id', ID, (c) => c.notNull())
    .addColumn('client_id', ID, (c) => c.notNull())
    .addColumn('expires_at', TIMESTAMP, (c) => c.notNull())
    .addColumn('revoked_at', TIMESTAMP, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('oauth_revoked_tokens_revoked_at')
    .on('oauth_revoked_tokens')
    .column('revoked_at')
    .execute();

  await db.schema
    .createTable('oauth_used_jtis')
    .addColumn('jti', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', TIMESTAMP, (c) => c.notNull())
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('oauth_used_jtis').execute();
  await db.schema.dropTable('oauth_revoked_tokens').execute();
  await db.schema.alterTable('api_clients').dropColumn('jwks_uri').execute();
  await db.schema.alterTable('api_clients').dropColumn('jwks').execute();
  await db.schema.alterTable('api_clients').dropColumn('auth_method').execute();
  await db.schema.dropTable('api_client_secrets').execute();
}
