import type { Page } from './page.ts';

/** A client's quotas per minute; `null`: the deployment's default applies (docs/machine-access.md "Quotas"). */
export interface ApiClientQuotasView {
  tokens_per_minute: number | null;
  api_calls_per_minute: number | null;
}

/**
 * An API client as Settings → API clients lists it. Never the secret: `secret_hint` (the secret's prefix and last
 * characters) only for a client that authenticates with a secret, none for `private_key_jwt`.
 */
export interface ApiClientView {
  client_id: string;
  name: string;
  scopes: string[];
  auth_method: 'client_secret_basic' | 'private_key_jwt';
  secret_hint?: string;
  jwks_uri?: string;
  /** DPoP (RFC 9449): a proof may bind the client's tokens (`optional`), or must (`required`). */
  dpop: 'optional' | 'required';
  created_at: string;
  last_used_at: string | null;
  quotas: ApiClientQuotasView;
}

/** `GET /portal/api/api-clients`: a page of clients and the scopes a new one may get. */
export interface ApiClientListing extends Page<ApiClientView> {
  available_scopes: readonly string[];
}

/** The 201 of `POST /portal/api/api-clients`: the only answer that carries the secret. */
export interface CreatedApiClientView extends ApiClientView {
  client_secret: string;
}

/** One secret of a client (`GET …/api-clients/{id}/secrets`): never the secret, nor its digest. */
export interface ApiClientSecretView {
  id: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

/** `GET /portal/api/api-clients/{id}/secrets`. */
export interface ApiClientSecretList {
  secrets: ApiClientSecretView[];
}

/** The 201 of `POST …/api-clients/{id}/secrets`: the new secret, shown once. */
export interface RotatedClientSecretView {
  client_id: string;
  client_secret: string;
  secret_id: string;
  /** When the secrets that were active before this rotation stop working. */
  old_secret_expires_at: string;
}

/** `PUT /portal/api/api-clients/{id}/quotas`. */
export interface ApiClientQuotasAnswer {
  client_id: string;
  quotas: ApiClientQuotasView;
}
