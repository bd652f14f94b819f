import { createHash, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

/** What a proof says; each field may be overridden to make a proof that must be refused. */
export interface ProofClaims {
  htm?: string;
  htu?: string;
  iat?: number;
  jti?: string;
  ath?: string;
  nonce?: string;
  typ?: string;
  /** Another JWK in the header than the signing key's (a private one, or a stranger's). */
  jwk?: JWK;
}

/** A DPoP key pair of the client, made with `jose` (an independent implementation, not the server's code). */
export interface DpopKey {
  jwk: JWK;
  jkt: string;
  proof(claims: ProofClaims): Promise<string>;
}

export async function makeDpopKey(alg: 'ES256' | 'RS256' | 'PS256' | 'EdDSA' = 'ES256'): Promise<DpopKey> {
  const pair = await generateKeyPair(alg, {
    extractable: true,
    ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}),
  });
  const jwk = await exportJWK(pair.publicKey);
  return {
    jwk,
    jkt: await calculateJwkThumbprint(jwk, 'sha256'),
    proof: (claims) => signProof(alg, pair.privateKey, jwk, claims),
  };
}

function signProof(alg: string, key: PrivateKey, jwk: JWK, claims: ProofClaims): Promise<string> {
  const payload: Record<string, unknown> = {
    htm: claims.htm ?? 'POST',
    htu: claims.htu,
    jti: claims.jti ?? randomUUID(),
    iat: claims.iat ?? Math.floor(Date.now() / 1000),
  };
  if (claims.ath) payload.ath = claims.ath;
  if (claims.nonce) payload.nonce = claims.nonce;
  return new SignJWT(payload)
    .setProtectedHeader({ alg, typ: claims.typ ?? 'dpop+jwt', jwk: claims.jwk ?? jwk })
    .sign(key);
}

/** RFC 9449 §4.2 `ath`, computed here independently of the server's code. */
export const athOf = (token: string): string => createHash('sha256').update(token).digest('base64url');
