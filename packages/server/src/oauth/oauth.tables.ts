export interface ApiClientsTable {
  /** `pcl_` + 22 base62 characters, server-generated (never chosen by a caller: RFC 9700 §4.15). */
  id: string;
  company_id: string;
  name: string;
  /** JSON array of scope strings, a non-empty subset of SCOPES. */
  scopes: string;
  /** Legacy (before migration 140): the first secret's digest. Secrets live in `api_client_secrets` now. */
  secret_digest: string;
  pepper_version: number;
  /** Last four characters of the secret, so people can tell secrets apart in listings. */
  secret_hint: string;
  created_at: string;
  /** Updated at most once a minute per node when the client obtains a token. */
  last_used_at: string | null;
  /** Soft delete: a deleted client never obtains a token again. */
  deleted_at: string | null;
  /** How the client authenticates at the token endpoint (migration 140). */
  auth_method: 'client_secret' | 'private_key_jwt';
  /** `private_key_jwt`: the client's public keys as a JSON JWK Set, when registered inline. */
  jwks: string | null;
  /** `private_key_jwt`: where the client publishes its JWK Set (fetched through the outbound policy). */
  jwks_uri: string | null;
  /** DPoP (RFC 9449) for this client's tokens (migration 200): a proof may bind them, or must. */
  dpop: DpopPolicy;
  /** Token requests per minute for this client; null: the default `oauth.tokensPerMinute` (migration 210). */
  tokens_per_minute: number | null;
  /** Bearer API calls per minute for this client; null: the default `oauth.apiCallsPerMinute`. */
  api_calls_per_minute: number | null;
}

/** `optional`: a valid proof binds the token; `required`: a token request without a proof is refused. */
export type DpopPolicy = 'optional' | 'required';

export interface ApiClientSecretsTable {
  /** `psk_` + 22 base62 characters; shown in listings, never secret. */
  id: string;
  client_id: string;
  /** base64url HMAC-SHA256 of the secret under the pepper of `pepper_version`. Never the secret itself. */
  digest: string;
  pepper_version: number;
  /** Last four characters of the secret. */
  hint: string;
  created_at: string;
  /** After this instant the secret no longer authenticates (set when a newer secret replaces it). */
  expires_at: string | null;
  revoked_at: string | null;
  /** Written in batches (SecretUsage), at most a few seconds behind. */
  last_used_at: string | null;
}

export interface RevokedTokensTable {
  jti: string;
  company_id: string;
  client_id: string;
  /** The token's own `exp`: afterwards the row is useless and may be deleted. */
  expires_at: string;
  revoked_at: string;
}

export interface UsedJtisTable {
  /** `client_id|jti` of a client assertion already accepted. */
  jti: string;
  expires_at: string;
}

export interface OAuthPeppersTable {
  version: number;
  /** 32 random bytes (base64url) sealed with the master key (`Sealer`), associated data `oauth_pepper|<version>`. */
  sealed: string;
  created_at: string;
}

export interface SigningKeysTable {
  /** RFC 7638 JWK thumbprint (base64url SHA-256) of the public key. */
  kid: string;
  alg: 'ES256' | 'RS256';
  /** JSON public JWK without `kid`/`alg`/`use` (added when published). */
  public_jwk: string;
  /** PKCS#8 PEM private key sealed with the master key, associated data `signing_key|<kid>`. */
  private_key: string;
  /** `active` signs new tokens (at most one row, enforced by a partial unique index); `retired` only verifies. */
  status: 'active' | 'retired';
  created_at: string;
  retired_at: string | null;
}

export interface OAuthTables {
  api_clients: ApiClientsTable;
  api_client_secrets: ApiClientSecretsTable;
  oauth_revoked_tokens: RevokedTokensTable;
  oauth_used_jtis: UsedJtisTable;
  oauth_peppers: OAuthPeppersTable;
  oauth_signing_keys: SigningKeysTable;
}

// This capability's tables join the one database type (storage/schema.ts) from here, so the store knows no feature.
declare module '../storage/schema.ts' {
  interface Database extends OAuthTables {}
}
