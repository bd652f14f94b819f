import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com/, "Verifying webhooks"): the secret is `whsec_`
 * and the base64 of the key; each signature is `v1,` + base64 HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.
 * {body}` keyed with the decoded key; several are space-separated while two secrets sign (after a rotation).
 */
export const SECRET_PREFIX = 'whsec_';
/** 256-bit keys (the scheme asks for 24 to 64 bytes). */
const SECRET_BYTES = 32;

export const newWebhookSecret = (): string => SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');

/** The HMAC key of a `whsec_…` secret: the base64-decoded part after the prefix. */
export const signingKeyOf = (secret: string): Buffer =>
  Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');

/** The `webhook-signature` header value: one `v1,<base64>` per key, space-separated. */
export function signatureHeader(keys: readonly Buffer[], id: string, timestampSeconds: number, body: string) {
  return keys
    .map(
      (key) =>
        `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.`).update(body).digest('base64')}`,
    )
    .join(' ');
}
