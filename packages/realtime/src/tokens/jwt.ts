import {
  createHmac,
  createPublicKey,
  type KeyObject,
  timingSafeEqual,
  verify as verifySignature,
} from 'node:crypto';
import { exceedsJsonDepth } from '../protocol/json-depth.ts';

/**
 * Compact JWS (RFC 7515 §7.1) decoding and signature checks with node:crypto only, synchronous on purpose: an
 * HMAC check costs microseconds and must not hop through the thread pool on every connect.
 */

export type TokenErrorCode = 'token_invalid' | 'token_expired';

/**
 * Why a token was refused; the engine maps `token_invalid` → 3500/103 and `token_expired` → 109
 * (docs/protocol.md "Tokens").
 */
export class TokenError extends Error {
  readonly code: TokenErrorCode;

  constructor(code: TokenErrorCode, message: string) {
    super(message);
    this.name = 'TokenError';
    this.code = code;
  }
}

export type HmacAlgorithm = 'HS256' | 'HS384' | 'HS512';
const HMAC_HASH: Record<string, string> = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' };
const RSA_HASH: Record<string, string> = { RS256: 'sha256', RS384: 'sha384', RS512: 'sha512' };
const ECDSA_HASH: Record<string, string> = { ES256: 'sha256', ES384: 'sha384', ES512: 'sha512' };

export interface JwtKeys {
  /** HMAC secrets; any one of them may have signed the token (Centrifugo `hmac_secret_key` + previous key). */
  hmacSecretKeys: readonly Buffer[];
  rsaPublicKey?: KeyObject;
  ecdsaPublicKey?: KeyObject;
  /**
   * When set, the only `alg` values accepted; any other is refused before a key is tried, whatever keys are
   * configured (RFC 8725 §3.1: an algorithm allow-list, never the token's own say).
   */
  algorithms?: readonly string[];
}

export interface DecodedJwt {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

function decodeJsonSegment(segment: string, what: string): Record<string, unknown> {
  if (!BASE64URL.test(segment)) throw new TokenError('token_invalid', `malformed ${what}`);
  const text = Buffer.from(segment, 'base64url').toString('utf8');
  // Claims are read and re-serialised (`info`, `data`): nesting past the limit is refused before anything walks it.
  if (exceedsJsonDepth(text)) throw new TokenError('token_invalid', `${what} nests too deeply`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new TokenError('token_invalid', `malformed ${what}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TokenError('token_invalid', `${what} is not a JSON object`);
  }
  return value as Record<string, unknown>;
}

function hmacMatches(
  hash: string,
  signingInput: string,
  signature: Buffer,
  secrets: readonly Buffer[],
): boolean {
  let matched = false;
  for (const secret of secrets) {
    const expected = createHmac(hash, secret).update(signingInput).digest();
    // Compare against every key without an early exit so timing does not reveal which key matched.
    if (expected.length === signature.length && timingSafeEqual(expected, signature)) matched = true;
  }
  return matched;
}

/** Verifies the signature of a compact JWS and returns its decoded header and payload; no claim checks. */
export function verifyJwt(token: string, keys: JwtKeys): DecodedJwt {
  const parts = token.split('.');
  if (parts.length !== 3) throw new TokenError('token_invalid', 'malformed token');
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const header = decodeJsonSegment(headerPart, 'header');
  if (!BASE64URL.test(signaturePart)) throw new TokenError('token_invalid', 'malformed signature');
  const signature = Buffer.from(signaturePart, 'base64url');
  const signingInput = `${headerPart}.${payloadPart}`;
  const alg = header.alg;
  if (typeof alg !== 'string') throw new TokenError('token_invalid', 'missing alg');
  if (keys.algorithms && !keys.algorithms.includes(alg))
    throw new TokenError('token_invalid', `algorithm ${alg} not allowed`);
  let valid: boolean;
  if (alg in HMAC_HASH) {
    if (keys.hmacSecretKeys.length === 0)
      throw new TokenError('token_invalid', `algorithm ${alg} not enabled`);
    valid = hmacMatches(HMAC_HASH[alg]!, signingInput, signature, keys.hmacSecretKeys);
  } else if (alg in RSA_HASH) {
    if (!keys.rsaPublicKey) throw new TokenError('token_invalid', `algorithm ${alg} not enabled`);
    valid = verifySignature(RSA_HASH[alg]!, Buffer.from(signingInput), keys.rsaPublicKey, signature);
  } else if (alg in ECDSA_HASH) {
    if (!keys.ecdsaPublicKey) throw new TokenError('token_invalid', `algorithm ${alg} not enabled`);
    // JWS carries ECDSA signatures as raw R||S (RFC 7518 §3.4), not DER.
    valid = verifySignature(
      ECDSA_HASH[alg]!,
      Buffer.from(signingInput),
      { key: keys.ecdsaPublicKey, dsaEncoding: 'ieee-p1363' },
      signature,
    );
  } else {
    throw new TokenError('token_invalid', `unsupported algorithm ${alg}`);
  }
  if (!valid) throw new TokenError('token_invalid', 'bad signature');
  return { header, payload: decodeJsonSegment(payloadPart, 'payload') };
}

/** Parses a PEM public key once at start-up; a bad key is a configuration error, not a token error. */
export function loadPublicKey(pem: string, expectedType: 'rsa' | 'ec'): KeyObject {
  const key = createPublicKey(pem);
  const type = key.asymmetricKeyType;
  if (expectedType === 'rsa' && type !== 'rsa' && type !== 'rsa-pss') {
    throw new Error(`expected an RSA public key, got ${type}`);
  }
  if (expectedType === 'ec' && type !== 'ec') throw new Error(`expected an ECDSA public key, got ${type}`);
  return key;
}

/**
 * Signs claims as an HMAC JWT (HS256 by default) for applications and tests that mint connection and
 * subscription tokens for this engine.
 */
export function signHmacJwt(
  claims: Record<string, unknown>,
  secret: string | Buffer,
  alg: HmacAlgorithm = 'HS256',
): string {
  const header = Buffer.from(JSON.stringify({ alg, typ: 'JWT' })).toString('base64url');
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const signature = createHmac(HMAC_HASH[alg]!, secret).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}
