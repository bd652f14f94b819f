import { randomBase62 } from '../../oauth/credentials.ts';

/**
 * A channel's identity secret: `pvi_` + 43 base62 characters (256 random bits). The prefix lets secret scanners and
 * people recognise one; base62 keeps it the same in every config format and HTTP header. Integrators sign visitor
 * tokens with the string's UTF-8 bytes as the HS256 key.
 */
const IDENTITY_SECRET_PREFIX = 'pvi_';

export const generateIdentitySecret = (): string => IDENTITY_SECRET_PREFIX + randomBase62(43);

/** Which of a channel's two secrets a sealed value is (bound into its associated data, so they cannot be swapped). */
export type SecretSlot = 'current' | 'previous';

/**
 * Associated data of a sealed identity secret: company, channel and slot, so a ciphertext copied to another
 * channel, company or slot fails its integrity check (like connector keys, integrations/connector-key.ts).
 */
export const identitySecretAad = (companyId: string, channelId: string, slot: SecretSlot): string =>
  `channel-identity-secret|${companyId}|${channelId}|${slot}`;
