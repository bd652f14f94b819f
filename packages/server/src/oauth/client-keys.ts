import { BadRequestError } from '../errors/app-error.ts';

/** A JWK Set as registered or fetched: public keys only. */
export interface ClientJwks {
  keys: Record<string, unknown>[];
}

/** Most keys a client may register or publish: a current and a next key per algorithm is plenty. */
const MAX_CLIENT_KEYS = 10;
const KEY_TYPES: Record<string, true> = { EC: true, RSA: true, OKP: true };
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth', 'priv'];
const MAX_URI_LENGTH = 2048;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * A `private_key_jwt` client's keys: a JWK Set of public keys (no private members), or an https `jwks_uri`
 * (http only for loopback, for tests and local development). Exactly one of the two.
 */
export function validClientKeys(
  jwks: unknown,
  jwksUri: string | undefined,
): { jwks?: ClientJwks; jwksUri?: string } {
  if ((jwks === undefined) === (jwksUri === undefined)) {
    throw new BadRequestError(
      'invalid_client_keys',
      'A private_key_jwt client needs either a JWK Set or a jwks_uri.',
    );
  }
  if (jwksUri !== undefined) return { jwksUri: validJwksUri(jwksUri) };
  return { jwks: validJwkSet(jwks) };
}

/** RFC 7591 §2 `jwks_uri`: an absolute https URL (http for loopback only), no fragment, no credentials. */
export function validJwksUri(text: string): string {
  let url: URL | undefined;
  try {
    url = text.length <= MAX_URI_LENGTH ? new URL(text) : undefined;
  } catch {
    url = undefined;
  }
  const secure =
    url?.protocol === 'https:' || (url?.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
  if (!url || !secure || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new BadRequestError(
      'invalid_client_keys',
      'A jwks_uri is an https URL (http only for loopback) without credentials or fragment.',
    );
  }
  return url.href;
}

/** A JWK Set of 1–MAX_CLIENT_KEYS public EC, RSA or OKP keys (RFC 7517 §5), as registered or fetched. */
export function validJwkSet(jwks: unknown): ClientJwks {
  const keys = (jwks as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > MAX_CLIENT_KEYS) {
    throw new BadRequestError('invalid_client_keys', `A JWK Set holds 1 to ${MAX_CLIENT_KEYS} keys.`);
  }
  for (const key of keys) {
    if (typeof key !== 'object' || key === null || !KEY_TYPES[(key as { kty?: string }).kty ?? '']) {
      throw new BadRequestError('invalid_client_keys', 'Each key must be an EC, RSA or OKP public JWK.');
    }
    if (PRIVATE_MEMBERS.some((m) => m in key)) {
      throw new BadRequestError('invalid_client_keys', 'The JWK Set must hold public keys only.');
    }
  }
  return { keys: keys as Record<string, unknown>[] };
}
