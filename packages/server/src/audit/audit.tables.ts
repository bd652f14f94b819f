export interface AuditEventsTable {
  id: string;
  company_id: string | null;
  /** `<noun>.<past-verb>`, e.g. `api_client.created`, `token.issued`, `connector.api_key_rotated`. */
  type: string;
  /** Who did it: `client:<client_id>`, `user:<id>`, `cli`, `system`. */
  actor: string | null;
  /** What it was done to (client id, connector id, …). */
  subject: string | null;
  ip: string | null;
  /** JSON object with event-specific fields. Never a secret. */
  details: string;
  created_at: string;
}

export interface AuditTables {
  audit_events: AuditEventsTable;
}

// This capability's tables join the one database type (storage/schema.ts) from here, so the store knows no feature.
declare module '../storage/schema.ts' {
  interface Database extends AuditTables {}
}
