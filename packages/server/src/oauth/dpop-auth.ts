import type { FastifyRequest } from 'fastify';
import type { Config } from '../config/schema.ts';
import { BearerError } from './bearer-error.ts';
import type { DpopProofs } from './dpop.ts';
import { DpopProofError } from './dpop-proof.ts';
import type { Principal } from './principal.ts';

/** What protected routes need for DPoP (RFC 9449 §7): the proof checks and the public base URL (`htu`). */
export interface ResourceDpop {
  proofs: DpopProofs;
  /** Read per request: the test server learns its port (publicUrl) after the app is built. */
  config: Pick<Config, 'publicUrl'>;
}

/**
 * `Authorization: DPoP <token>` (RFC 9449 §7.1): the token must be DPoP-bound, and the request must carry one proof
 * for this method and URI, with `ath` the token's hash, signed by the key the token is bound to (`cnf.jkt`, §6.1),
 * its `jti` not seen before on any node (§11.1) and, with nonces on, a current nonce (§9). Failures are 401 with a
 * `WWW-Authenticate: DPoP` challenge.
 */
export async function checkDpopBinding(
  request: FastifyRequest,
  token: string,
  principal: Principal,
  dpop: ResourceDpop,
): Promise<Principal> {
  if (!principal.jkt)
    throw new BearerError('invalid_token', 'This access token is not DPoP-bound: send it as Bearer.', {
      scheme: 'DPoP',
    });
  const path = request.url.split(/[?#]/, 1)[0]!;
  try {
    const proof = await dpop.proofs.check({
      header: request.headers.dpop,
      method: request.method,
      uri: `${dpop.config.publicUrl}${path}`,
      accessToken: token,
    });
    if (!proof) throw new DpopProofError('missing');
    if (proof.jkt !== principal.jkt) throw new DpopProofError('wrong_key');
  } catch (err) {
    if (!(err instanceof DpopProofError)) throw err;
    request.log.debug({ reason: err.reason }, 'DPoP proof refused');
    if (err.wantsNonce && dpop.proofs.nonces) {
      throw new BearerError('use_dpop_nonce', 'Resource server requires nonce in DPoP proof.', {
        scheme: 'DPoP',
        nonce: dpop.proofs.nonces.current(),
      });
    }
    throw new BearerError('invalid_dpop_proof', 'The DPoP proof is invalid.', { scheme: 'DPoP' });
  }
  return principal;
}
