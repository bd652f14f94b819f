import { createHash, type KeyObject, sign, verify } from 'node:crypto';
import { exceedsJsonDepth } from '@parley/realtime';

/**
 * Compact JWS (RFC 7515 §7.1) with node:crypto directly: synchronous and several times faster than WebCrypto-based
 * libraries. Only the two algorithms Parley signs with exist here, so nothing else can ever be accepted
 * (RFC 8725 §3.1: algorithm allow-list; the algorithm is bound to the key, never read from the token alone).
 */
export type JwsAlg = 'ES256' | 'RS256';
export const JWS_ALGS: readonly JwsAlg[] = ['ES256', 'RS256'];

export const b64url = (data: string | Buffer): string => Buffer.from(data).toString('base64url');

/** `alg`+`typ`+`kid` header, encoded once per key: signing then only encodes the payload. */
export const encodeHeader = (header: { alg: JwsAlg; typ: string; kid: string }): string =>
  b64url(JSON.stringify(header));

// ES256 signatures are the raw 64-byte R||S (RFC 7518 §3.4), not DER: the same key options sign and verify.
const keyFor = (alg: JwsAlg, key: KeyObject) =>
  alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' as const } : key;

const signingInput = (encodedHeader: string, payload: object): string =>
  `${encodedHeader}.${b64url(JSON.stringify(payload))}`;

export function signJws(encodedHeader: string, payload: object, alg: JwsAlg, key: KeyObject): string {
  const input = signingInput(encodedHeader, payload);
  const signature = sign('sha256', Buffer.from(input), keyFor(alg, key));
  return `${input}.${signature.toString('base64url')}`;
}

/**
 * `signJws` on libuv's thread pool (node:crypto's callback form): the signature — the largest single cost of a
 * token grant — runs beside the event loop instead of on it, so a busy token endpoint uses more than one core and
 * the loop keeps answering other requests meanwhile.
 */
export function signJwsInPool(
  encodedHeader: string,
  payload: object,
  alg: JwsAlg,
  key: KeyObject,
): Promise<string> {
  const input = signingInput(encodedHeader, payload);
  return new Promise((resolve, reject) => {
    sign('sha256', Buffer.from(input), keyFor(alg, key), (error, signature) => {
      if (error) reject(error);
      else resolve(`${input}.${signature.toString('base64url')}`);
    });
  });
}

export function verifyJwsSignature(token: string, alg: JwsAlg, key: KeyObject): boolean {
  const dot = token.lastIndexOf('.');
  const input = Buffer.from(token.slice(0, dot));
  const signature = Buffer.from(token.slice(dot + 1), 'base64url');
  if (alg === 'ES256' && signature.length !== 64) return false;
  return verify('sha256', input, keyFor(alg, key), signature);
}

export interface DecodedJws {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
}

const SEGMENT = /^[A-Za-z0-9_-]+$/;

/** Splits and parses a compact JWS without trusting it; `undefined` when it is not one. */
export function decodeJws(token: string): DecodedJws | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((p) => SEGMENT.test(p))) return undefined;
  const [headerText, payloadText] = [parts[0]!, parts[1]!].map((p) =>
    Buffer.from(p, 'base64url').toString('utf8'),
  );
  // Claims are read and re-serialised: nesting past the limit is not a JWS we read (docs/design.md "JSON nesting").
  if (exceedsJsonDepth(headerText!) || exceedsJsonDepth(payloadText!)) return undefined;
  try {
    const header = JSON.parse(headerText!);
    const payload = JSON.parse(payloadText!);
    if (!isObject(header) || !isObject(payload)) return undefined;
    return { header, payload };
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 7638 JWK thumbprint: SHA-256 over the required members in lexicographic order, base64url. */
export function jwkThumbprint(jwk: Record<string, unknown>): string {
  const members =
    jwk.kty === 'EC'
      ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }
      : { e: jwk.e, kty: jwk.kty, n: jwk.n };
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}
