import type { DpopNonces } from './dpop-nonces.ts';
import {
  DPOP_ALGS,
  DpopProofError,
  type DpopRequest,
  ProofKeys,
  proofHeader,
  type VerifiedProof,
  verifyDpopProof,
} from './dpop-proof.ts';
import { OAuthError } from './oauth-errors.ts';

export interface DpopSettings {
  /** How old a proof's `iat` may be, in seconds (PARLEY_DPOP_PROOF_MAX_AGE_SECONDS). */
  proofMaxAgeSeconds: number;
  clockToleranceSeconds: number;
}

/**
 * The DPoP (RFC 9449) checks shared by the token endpoint and every protected route: the proof itself
 * (oauth/dpop-proof.ts), the server nonce when nonces are on (§8, §9), and the proof's `jti` used once only across
 * the cluster (§11.1), recorded in the store until the proof would be too old anyway.
 */
export class DpopProofs {
  private readonly keys = new ProofKeys();

  constructor(
    private readonly settings: DpopSettings,
    /** Records a `jti` once across the cluster (oauth/used-jtis.ts); `false` when it was seen before. */
    private readonly claimJti: (key: string, expSeconds: number) => Promise<boolean>,
    /** Present when PARLEY_DPOP_NONCE is on. */
    readonly nonces: DpopNonces | undefined,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The verified proof of a request, or `undefined` when it carries no `DPoP` header. */
  async check(request: DpopRequest): Promise<VerifiedProof | undefined> {
    const proof = proofHeader(request.header);
    if (proof === undefined) return undefined;
    const { proofMaxAgeSeconds, clockToleranceSeconds } = this.settings;
    const nowSeconds = this.clock() / 1000;
    const verified = await verifyDpopProof(
      proof,
      request,
      {
        nowSeconds,
        maxAgeSeconds: proofMaxAgeSeconds,
        toleranceSeconds: clockToleranceSeconds,
      },
      this.keys,
    );
    if (this.nonces && !this.nonces.accepts(verified.nonce)) throw new DpopProofError('nonce', true);
    const keptUntil = Math.ceil(
      Math.max(verified.iat, nowSeconds) + proofMaxAgeSeconds + clockToleranceSeconds,
    );
    if (!(await this.claimJti(`dpop|${verified.jkt}|${verified.jti}`, keptUntil)))
      throw new DpopProofError('jti_replayed');
    return verified;
  }
}

/** RFC 9449 §7.1 `algs` challenge parameter: the proof algorithms accepted, space-separated. */
export const DPOP_ALGS_PARAM = DPOP_ALGS.join(' ');

/**
 * A refused proof at the token endpoint (RFC 9449 §5.2): 400 `invalid_dpop_proof`, or `use_dpop_nonce` with a fresh
 * `DPoP-Nonce` header (§8) for the client to retry with. The description never says which check failed.
 */
export function tokenEndpointDpopError(err: DpopProofError, nonces: DpopNonces | undefined): OAuthError {
  if (err.wantsNonce && nonces)
    return new OAuthError('use_dpop_nonce', 'Authorization server requires nonce in DPoP proof.', 400, {
      'dpop-nonce': nonces.current(),
    });
  return new OAuthError('invalid_dpop_proof', 'The DPoP proof is invalid.');
}

/** RFC 9449 §5.2 (`dpop_bound_access_tokens`): a client that must use DPoP sent no proof. */
export const dpopProofRequired = (): OAuthError =>
  new OAuthError('invalid_dpop_proof', 'This client must send a DPoP proof.');
