import { AppError } from '../errors/app-error.ts';
import { DPOP_ALGS_PARAM } from './dpop.ts';
import { REALM } from './oauth-errors.ts';

export type BearerErrorCode =
  | 'token_required'
  | 'invalid_request'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce';

/** The challenge's scheme: `Bearer` (RFC 6750 §3) or, for DPoP-bound tokens, `DPoP` (RFC 9449 §7.1). */
export interface ChallengeOptions {
  requiredScope?: string;
  scheme?: 'Bearer' | 'DPoP';
  /** `use_dpop_nonce` (RFC 9449 §9): the nonce to retry with, sent as `DPoP-Nonce`. */
  nonce?: string;
}

/**
 * An RFC 6750 §3 failure: the `WWW-Authenticate: Bearer …` challenge is the contract; the problem+json body
 * carries the same code for people and generic clients. `token_required` (no credentials at all) sends the bare
 * challenge without an error code (§3.1). With the `DPoP` scheme (RFC 9449 §7.1) the challenge also lists the
 * proof algorithms accepted (`algs`).
 */
export class BearerError extends AppError {
  constructor(code: BearerErrorCode, detail: string, options: ChallengeOptions = {}) {
    const { requiredScope, scheme = 'Bearer', nonce } = options;
    const status = code === 'invalid_request' ? 400 : code === 'insufficient_scope' ? 403 : 401;
    const params = [`realm="${REALM}"`];
    if (code !== 'token_required') params.push(`error="${code}"`, `error_description="${detail}"`);
    if (requiredScope) params.push(`scope="${requiredScope}"`);
    if (scheme === 'DPoP') params.push(`algs="${DPOP_ALGS_PARAM}"`);
    super(status, code, detail, requiredScope ? { required_scope: requiredScope } : {}, {
      'www-authenticate': `${scheme} ${params.join(', ')}`,
      ...(nonce ? { 'dpop-nonce': nonce } : {}),
    });
  }
}
