import { constants, createPublicKey, type JsonWebKey, type KeyObject, verify } from 'node:crypto';
import { decodeJws } from './jwt.ts';
import { LruCache } from './lru-cache.ts';

/** RFC 7523 §2.2: the `client_assertion_type` of a JWT client assertion. */
export const JWT_BEARER_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** Algorithms accepted for client assertions (RFC 8725 §3.1 allow-list); `none` and HMAC never. */
export const ASSERTION_ALGS = ['ES256', 'RS256', 'PS256', 'EdDSA'] as const;
type AssertionAlg = (typeof ASSERTION_ALGS)[number];
/** Longest an assertion may live ahead of now (docs/machine-access.md: `exp` ≤ 5 min ahead). */
export const MAX_ASSERTION_LIFETIME_SECONDS = 300;

export interface AssertionClaims {
  iss: string;
  sub: string;
  jti: string;
  exp: number;
}

/** Why an assertion was refused (audit only; the caller always gets `invalid_client`). */
export class AssertionError extends Error {}

/** The `iss` of an assertion, read without trusting it, to find the client whose keys must verify it. */
export function assertionIssuer(assertion: string): string | undefined {
  const iss = decodeJws(assertion)?.payload.iss;
  return typeof iss === 'string' ? iss : undefined;
}

/**
 * Checks a client assertion (RFC 7523 §3) against the client's registered public keys: compact JWS with an allowed
 * `alg` that fits the key type; signature by a key of the client's JWK Set (by `kid` when given, else any key of a
 * matching type); `iss` = `sub` = client_id (§3 rules 1–2); `aud` holds the token endpoint URL or the issuer
 * (rule 3); `exp` present, not past and at most MAX_ASSERTION_LIFETIME_SECONDS ahead (rule 4, bounded so the `jti`
 * store stays small); `nbf`/`iat` not in the future; `jti` present (rule 7: single use is the caller's check).
 */
export function verifyClientAssertion(
  assertion: string,
  input: {
    clientId: string;
    keys: readonly Record<string, unknown>[];
    audiences: readonly string[];
    nowSeconds: number;
    toleranceSeconds: number;
  },
): AssertionClaims {
  const decoded = decodeJws(assertion);
  if (!decoded) throw new AssertionError('malformed');
  const { header, payload } = decoded;
  const alg = header.alg;
  if (typeof alg !== 'string' || !(ASSERTION_ALGS as readonly string[]).includes(alg))
    throw new AssertionError('alg_not_allowed');
  if (header.crit !== undefined) throw new AssertionError('unsupported_crit');
  const candidates = input.keys.filter(
    (k) =>
      fitsAlg(k, alg as AssertionAlg) &&
      (header.kid === undefined || k.kid === header.kid) &&
      (k.alg === undefined || k.alg === alg),
  );
  if (candidates.length === 0) throw new AssertionError('no_matching_key');
  if (!candidates.some((k) => verifySignature(assertion, alg as AssertionAlg, k)))
    throw new AssertionError('bad_signature');

  const { nowSeconds: now, toleranceSeconds: tol } = input;
  if (payload.iss !== input.clientId || payload.sub !== input.clientId)
    throw new AssertionError('iss_sub_mismatch');
  const aud = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (!aud.some((a) => typeof a === 'string' && input.audiences.includes(a)))
    throw new AssertionError('wrong_aud');
  if (typeof payload.exp !== 'number') throw new AssertionError('missing_exp');
  if (payload.exp + tol <= now) throw new AssertionError('expired');
  if (payload.exp > now + MAX_ASSERTION_LIFETIME_SECONDS + tol) throw new AssertionError('exp_too_far');
  if (typeof payload.nbf === 'number' && payload.nbf - tol > now) throw new AssertionError('not_yet_valid');
  if (typeof payload.iat === 'number' && payload.iat - tol > now)
    throw new AssertionError('issued_in_future');
  if (typeof payload.jti !== 'string' || payload.jti === '' || payload.jti.length > 200)
    throw new AssertionError('missing_jti');
  return { iss: payload.iss, sub: payload.sub, jti: payload.jti, exp: payload.exp };
}

function fitsAlg(jwk: Record<string, unknown>, alg: AssertionAlg): boolean {
  if (alg === 'ES256') return jwk.kty === 'EC' && jwk.crv === 'P-256';
  if (alg === 'EdDSA') return jwk.kty === 'OKP' && jwk.crv === 'Ed25519';
  return jwk.kty === 'RSA';
}

/**
 * Imported public keys by their JWK's JSON text: a client's JWK Set is parsed afresh with its row at every grant,
 * so an object-keyed cache never hit, and importing a key (createPublicKey) costs more than verifying with it.
 * Keyed by content, a changed key set simply misses.
 */
const keyCache = new LruCache<string, KeyObject>(1_000);

function verifySignature(token: string, alg: AssertionAlg, jwk: Record<string, unknown>): boolean {
  const cacheKey = JSON.stringify(jwk);
  let key = keyCache.get(cacheKey);
  try {
    if (!key) {
      // Only the public members: a JWK Set never holds private ones (checked at registration).
      key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
      keyCache.set(cacheKey, key);
    }
    if (alg === 'RS256' || alg === 'PS256') {
      const details = key.asymmetricKeyDetails;
      // RFC 7518 §3.3/§3.5: RSA keys of at least 2048 bits.
      if (!details?.modulusLength || details.modulusLength < 2048) return false;
    }
    const dot = token.lastIndexOf('.');
    const input = Buffer.from(token.slice(0, dot));
    const signature = Buffer.from(token.slice(dot + 1), 'base64url');
    switch (alg) {
      case 'ES256':
        return (
          signature.length === 64 && verify('sha256', input, { key, dsaEncoding: 'ieee-p1363' }, signature)
        );
      case 'RS256':
        return verify('sha256', input, key, signature);
      case 'PS256':
        // RFC 7518 §3.5: MGF1 with SHA-256, salt as long as the hash.
        return verify(
          'sha256',
          input,
          { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 },
          signature,
        );
      case 'EdDSA':
        return verify(null, input, key, signature);
    }
  } catch {
    return false;
  }
}
