import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, EmbeddedJWK, errors, type JWK, jwtVerify } from 'jose';
import { LruCache } from './lru-cache.ts';

/** Algorithms accepted for DPoP proofs (RFC 9449 §4.3 rule 5, RFC 8725 §3.1): asymmetric only, never `none`. */
export const DPOP_ALGS = ['ES256', 'RS256', 'PS256', 'EdDSA'] as const;
/** RFC 9449 §4.2: the `typ` of a DPoP proof. */
export const DPOP_TYP = 'dpop+jwt';
/** A proof is a compact JWS: three base64url parts (RFC 7515 §7.1); anything else is refused before parsing. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** Proofs are small (a public key and five claims); a much larger header is no proof. */
const MAX_PROOF_LENGTH = 8 * 1024;

/** Proof keys kept imported (ProofKeys), and the longest protected header kept: an RSA-4096 `jwk` fits. */
const PROOF_KEYS_KEPT = 1024;
const MAX_CACHED_HEADER_LENGTH = 1024;

/** A proof key imported from a proof's `jwk` header, with its RFC 7638 thumbprint. */
interface ProofKey {
  key: CryptoKey;
  jkt: string;
}

/**
 * Proof keys already imported, by the proof's protected header as sent (its first base64url segment). A client signs
 * every proof with one key, so every proof of it carries the same header (`typ`, `alg`, `jwk`): importing that JWK
 * (`EmbeddedJWK`) and hashing its thumbprint once instead of per request takes the larger part of what a proof cost
 * beyond its signature check. Sound because the same header bytes always yield the same key and thumbprint; only a
 * header whose proof verified is kept, so junk cannot push clients' keys out faster than the LRU's own bound.
 */
export class ProofKeys {
  private readonly keys = new LruCache<string, ProofKey>(PROOF_KEYS_KEPT);

  get(header: string): ProofKey | undefined {
    return this.keys.get(header);
  }

  remember(header: string, key: ProofKey): void {
    if (header.length <= MAX_CACHED_HEADER_LENGTH) this.keys.set(header, key);
  }
}

/** Why a proof was refused; the caller answers `invalid_dpop_proof` (or `use_dpop_nonce` for `nonce`). */
export class DpopProofError extends Error {
  constructor(
    readonly reason: string,
    /** `use_dpop_nonce` (RFC 9449 §8, §9) rather than `invalid_dpop_proof`. */
    readonly wantsNonce = false,
  ) {
    super(reason);
  }
}

export interface DpopRequest {
  /** The `DPoP` header(s) of the request as Node gives them. */
  header: string | string[] | undefined;
  /** The request's method (`htm`). */
  method: string;
  /** The request's URI as the client addressed it, without query and fragment (`htu`). */
  uri: string;
  /** With an access token (protected routes): its value, whose hash the proof's `ath` must be (§4.3 rule 11). */
  accessToken?: string;
}

export interface VerifiedProof {
  /** RFC 7638 SHA-256 thumbprint of the proof's public key: the `cnf.jkt` the token is bound to (§6.1). */
  jkt: string;
  jti: string;
  iat: number;
  nonce: string | undefined;
}

export interface ProofRules {
  /** Seconds since the epoch. */
  nowSeconds: number;
  /** How old `iat` may be (§4.3 rule 9, §11.1). */
  maxAgeSeconds: number;
  /** Leeway for clocks that disagree, also for an `iat` slightly in the future. */
  toleranceSeconds: number;
}

/** The proof in a request's `DPoP` header, or `undefined` when there is none; two headers are refused (§4.3 rule 1). */
export function proofHeader(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (Array.isArray(header) || header.includes(',')) throw new DpopProofError('several_proofs');
  return header.trim();
}

/**
 * Checks a DPoP proof as RFC 9449 §4.3 lists, with `jose` doing the JWS work: one compact JWS (rule 2); `typ`
 * `dpop+jwt` (rule 4); an allowed asymmetric `alg` (rule 5); the signature by the public key in its `jwk` header,
 * which must hold no private member (rules 6–7); `jti`, `htm`, `htu`, `iat` present (rule 3); `htm` the request's
 * method (rule 8); `htu` the request's URI without query and fragment, compared after RFC 3986 §6.2.2–6.2.3
 * normalisation (rule 9); `iat` within the window (rule 10); `ath` the hash of the access token when one is
 * presented (rule 11). The `nonce` (rule 10) and `jti` single use (§11.1) are the caller's checks.
 */
export async function verifyDpopProof(
  proof: string,
  request: Omit<DpopRequest, 'header'>,
  rules: ProofRules,
  keys?: ProofKeys,
): Promise<VerifiedProof> {
  if (proof.length > MAX_PROOF_LENGTH || !COMPACT_JWS.test(proof)) throw new DpopProofError('malformed');
  const header = proof.slice(0, proof.indexOf('.'));
  const known = keys?.get(header);
  let verified: Awaited<ReturnType<typeof jwtVerify<Record<string, unknown>>>>;
  let imported: CryptoKey | undefined;
  try {
    // `jose` still parses this header and checks `typ` and `alg` on every proof; only the key import is skipped.
    const key = known
      ? known.key
      : async (...args: Parameters<typeof EmbeddedJWK>) => {
          imported = await EmbeddedJWK(...args);
          return imported;
        };
    verified = await jwtVerify(proof, key, {
      typ: DPOP_TYP,
      algorithms: [...DPOP_ALGS],
      requiredClaims: ['jti', 'htm', 'htu', 'iat'],
      maxTokenAge: rules.maxAgeSeconds,
      clockTolerance: rules.toleranceSeconds,
      currentDate: new Date(rules.nowSeconds * 1000),
    });
  } catch (err) {
    if (err instanceof errors.JOSEError || err instanceof TypeError)
      throw new DpopProofError(joseReason(err));
    throw err;
  }
  const { payload, protectedHeader } = verified;
  if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 256)
    throw new DpopProofError('bad_jti');
  if (payload.htm !== request.method) throw new DpopProofError('htm_mismatch');
  if (typeof payload.htu !== 'string' || !sameHttpUri(payload.htu, request.uri))
    throw new DpopProofError('htu_mismatch');
  if (request.accessToken !== undefined && payload.ath !== accessTokenHash(request.accessToken))
    throw new DpopProofError('ath_mismatch');
  if (payload.nonce !== undefined && typeof payload.nonce !== 'string') throw new DpopProofError('bad_nonce');
  let jkt = known?.jkt;
  if (jkt === undefined) {
    jkt = await calculateJwkThumbprint(protectedHeader.jwk as JWK, 'sha256');
    if (imported) keys?.remember(header, { key: imported, jkt });
  }
  return {
    jkt,
    jti: payload.jti,
    iat: payload.iat as number,
    nonce: payload.nonce as string | undefined,
  };
}

/** RFC 9449 §4.2 `ath`: base64url SHA-256 of the ASCII access token. */
export const accessTokenHash = (token: string): string =>
  createHash('sha256').update(token, 'ascii').digest('base64url');

/**
 * RFC 9449 §4.3 rule 9: `htu` matches the request URI ignoring query and fragment, after syntax- and scheme-based
 * normalisation (RFC 3986 §6.2.2–6.2.3: case of scheme and host, default port, percent-encoding case, dot segments),
 * which the WHATWG URL parser performs.
 */
export function sameHttpUri(htu: string, expected: string): boolean {
  const a = parseHttpUri(htu);
  const b = parseHttpUri(expected);
  return a !== undefined && b !== undefined && a === b;
}

function parseHttpUri(text: string): string | undefined {
  try {
    const url = new URL(text);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
    return `${url.origin}${url.pathname.replace(/%[0-9a-f]{2}/gi, (m) => m.toUpperCase())}`;
  } catch {
    return undefined;
  }
}

function joseReason(err: Error): string {
  if (err instanceof errors.JWTExpired) return 'iat_too_old';
  if (err instanceof errors.JWTClaimValidationFailed) return `claim_${err.claim}_${err.reason}`;
  if (err instanceof errors.JOSEAlgNotAllowed) return 'alg_not_allowed';
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'bad_signature';
  return 'malformed';
}
