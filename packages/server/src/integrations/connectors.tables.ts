export interface ConnectorsTable {
  id: string;
  company_id: string;
  name: string;
  /** A key of the connector type registry (connector-types.ts): `webhook`, `openai`. */
  type: string;
  /** Base URL (http/https) outbound calls are made against. */
  url: string;
  /** Sealed envelope of the current API key (crypto/sealing.ts); null until a key is set. Never returned. */
  api_key_sealed: string | null;
  /** `fp1.<base64url HMAC>` of the current key (connector-key.ts); lets a repeated PUT be recognised. */
  api_key_fingerprint: string | null;
  /** 0 = never set; +1 on every rotation; part of the sealed value's associated data. */
  key_version: number;
  created_at: string;
  rotated_at: string | null;
}

export interface IntegrationSecretsTable {
  name: string;
  /** Sealed envelope; associated data `integration-secret|<name>`. */
  sealed: string;
  created_at: string;
}

export interface IntegrationsTables {
  connectors: ConnectorsTable;
  integration_secrets: IntegrationSecretsTable;
}

// This capability's tables join the one database type (storage/schema.ts) from here, so the store knows no feature.
declare module '../storage/schema.ts' {
  interface Database extends IntegrationsTables {}
}
