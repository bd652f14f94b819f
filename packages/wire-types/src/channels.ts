import type { Page } from './page.ts';

/** Who a channel's visitors are: anonymous, verified when a token is sent, or verified only (docs/design.md "Visitor identity"). */
export type IdentityMode = 'off' | 'optional' | 'required';

/** A channel as Settings → Channels shows it, with its ready-to-paste widget snippet; never the identity secret. */
export interface ChannelView {
  id: string;
  name: string;
  digital_employee: { id: string; name: string | null };
  allowed_origins: string[];
  created_at: string;
  snippet: string;
  identity: IdentityMode;
  identity_secret_set: boolean;
  /** Until when the previous secret still verifies after a rotation; null when none does. */
  identity_previous_secret_until: string | null;
}

/** `PUT /portal/api/channels/{id}/identity`: the mode now, and a new secret only the one time it is made. */
export interface ChannelIdentityView {
  channel_id: string;
  identity: IdentityMode;
  /** Only when the channel got a secret just now (its first, or a rotation): shown once, never again. */
  identity_secret?: string;
}

/** A digital employee a channel may route to (the channel form's choices). */
export interface ChannelEmployeeOption {
  id: string;
  name: string;
  is_default: boolean;
}

/** `GET /portal/api/channels`: a page of channels and the digital employees a channel may route to. */
export interface ChannelListing extends Page<ChannelView> {
  digital_employees: ChannelEmployeeOption[];
}
