import type { Page } from './page.ts';

/** A connector as Settings → Connectors lists it: metadata only, never the API key (it is write-only). */
export interface ConnectorView {
  id: string;
  name: string;
  type: string;
  /** The base URL outbound calls go to. */
  url: string;
  api_key_set: boolean;
  /** 0 = never set; +1 on every rotation. */
  key_version: number;
  rotated_at: string | null;
  created_at: string;
}

/** A kind of connector the create form offers, with the URL it suggests. */
export interface ConnectorTypeView {
  name: string;
  summary: string;
  default_url: string | null;
}

/** `GET /portal/api/connectors`: a page of connectors and the types a new one may have. */
export interface ConnectorListing extends Page<ConnectorView> {
  types: ConnectorTypeView[];
}

/** `PUT /portal/api/connectors/{id}/api-key`: versions and times only, never the key. */
export interface KeyRotationView {
  connector_id: string;
  key_version: number;
  rotated_at: string;
  /** False when the key sent is already the current key (nothing was changed). */
  changed: boolean;
}

/** `POST /portal/api/connectors/{id}/check`: one call with the current key. */
export interface ConnectorCheckView {
  /** True for a 2xx answer. */
  ok: boolean;
  /** The answer's HTTP status; 0 when none arrived. */
  status: number;
  latency_ms: number;
  /** The version of the key that was sent. */
  key_version: number;
  /** Why no answer arrived (a code of docs/errors.md). */
  error?: string;
  detail?: string;
}
