/**
 * Idempotency keys (migration 070_idempotency_keys): one row per (company, key) a client sent with a message post
 * (idempotency/idempotency-keys.ts). Times are milliseconds since the epoch on the database's clock
 * (storage/db-clock.ts), which every node compares.
 */
export interface IdempotencyKeysTable {
  company_id: string;
  idempotency_key: string;
  /** SHA-256 (hex) of the request the key was first used for: method, path and canonical body. */
  fingerprint: string;
  /** When the key was first used; the row is forgotten 24 h later. */
  created_ms: number;
  /** When the request running under the key (last) took it; another may take it over once the lease lapsed. */
  claimed_ms: number;
  /** The first answer, once there is one: its status, content type and body text. */
  status_code: number | null;
  content_type: string | null;
  response_body: string | null;
}

export interface IdempotencyTables {
  idempotency_keys: IdempotencyKeysTable;
}

// This capability's tables join the one database type (storage/schema.ts) from here, so the store knows no feature.
declare module '../storage/schema.ts' {
  interface Database extends IdempotencyTables {}
}
