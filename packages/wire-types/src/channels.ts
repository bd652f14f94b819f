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

/** A digital employee a channel may route to (the channel form's choices). */
export interface ChannelEmployeeOption {
  id: string;
  name: string;
  is_default: boolean;
}
