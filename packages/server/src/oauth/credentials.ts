import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * Formats of API-client credentials. Both use only base62 characters after a typed prefix, so their raw and
 * form-urlencoded forms are identical (RFC 6749 App. B): clients that forget to encode Basic credentials work too.
 *
 * - Client ID: `pcl_` + 22 base62 characters (≈131 random bits). Server-generated and prefixed, so a client's `sub`
 *   can never equal a user's (RFC 9700 §4.15).
 * - Client secret: `pcs_` + 43 base62 characters (256.03 random bits) + 6 base62 characters of CRC-32 over
 *   everything before it. The prefix lets secret scanners find leaked secrets; the checksum lets them (and us)
 *   tell a real secret from a typo or random string without a database lookup (GitHub's token format).
 */
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export const CLIENT_ID_PREFIX = 'pcl_';
export const CLIENT_SECRET_PREFIX = 'pcs_';
const CLIENT_ID_RANDOM = 22;
const SECRET_RANDOM = 43;
const CHECKSUM_LENGTH = 6;

const CLIENT_ID_RE = /^pcl_[0-9A-Za-z]{22}$/;
const SECRET_RE = /^pcs_[0-9A-Za-z]{49}$/;

/** `length` uniformly random base62 characters (rejection sampling: bytes ≥ 248 would bias `% 62`). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

function base62Fixed(value: number, length: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < length; i++) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

const checksumOf = (body: string): string => base62Fixed(crc32(body), CHECKSUM_LENGTH);

export const generateClientId = (): string => CLIENT_ID_PREFIX + randomBase62(CLIENT_ID_RANDOM);

export function generateClientSecret(): string {
  const body = CLIENT_SECRET_PREFIX + randomBase62(SECRET_RANDOM);
  return body + checksumOf(body);
}

export const isClientIdSyntax = (value: string): boolean => CLIENT_ID_RE.test(value);

/** Prefix, length, alphabet and checksum all right: worth a database lookup. */
export function isWellFormedSecret(value: string): boolean {
  if (!SECRET_RE.test(value)) return false;
  const body = value.slice(0, -CHECKSUM_LENGTH);
  return checksumOf(body) === value.slice(-CHECKSUM_LENGTH);
}

/** What listings show to tell secrets apart: never enough to matter (4 of 53 characters). */
export const secretHint = (secret: string): string => secret.slice(-4);
