import type { Config } from '../config/schema.ts';
import { randomBase64url } from '../crypto/random-pool.ts';
import type { ErrorCode } from '../errors/codes.ts';
import { decodeJws, type JwsAlg, signJwsInPool, verifyJwsSignature } from './jwt.ts';
import { LruCache } from './lru-cache.ts';
import type { Principal } from './principal.ts';
import { ACCESS_TOKEN_TYP, type SigningKeyStore, TOKEN_LIFETIME_SECONDS } from './signing-keys.ts';

/** RFC 9068 §2.2 claims of a Parley access token, plus `company_id` (private claim: the tenant). */
export interface AccessTokenClaims {
  iss: string;
  sub: string;
  client_id: string;
  aud: string;
  scope: string;
  company_id: string;
  iat: number;
  exp: number;
  jti: string;
  /** RFC 9449 §6.1: the DPoP key the token is bound to (RFC 7638 thumbprint). */
  cnf?: { jkt: string };
}

export interface IssuedAccessToken {
  token: string;
  claims: AccessTokenClaims;
  kid: string;
  alg: JwsAlg;
  expiresIn: number;
}

/**
 * Mints RFC 9068 access tokens with the active signing key. `iss` and `aud` are read from config at every call
 * (`iss` = PARLEY_PUBLIC_URL, docs/design.md "Access tokens").
 */
export class AccessTokenIssuer {
  constructor(
    private readonly keys: SigningKeyStore,
    private readonly config: Config,
  ) {}

  async issue(input: {
    clientId: string;
    companyId: string;
    scopes: readonly string[];
    /** A DPoP proof's key thumbprint: the token is then bound to it (`cnf.jkt`). */
    jkt?: string;
  }): Promise<IssuedAccessToken> {
    const key = this.keys.signingKey();
    const iat = Math.floor(Date.now() / 1000);
    const claims: AccessTokenClaims = {
      iss: this.config.publicUrl,
      // Client-credentials tokens speak for the client itself (RFC 9068 §2.2, §5): sub = client_id.
      sub: input.clientId,
      client_id: input.clientId,
      aud: this.config.oauth.audience,
      scope: input.scopes.join(' '),
      company_id: input.companyId,
      iat,
      exp: iat + TOKEN_LIFETIME_SECONDS,
      jti: randomBase64url(16),
      ...(input.jkt ? { cnf: { jkt: input.jkt } } : {}),
    };
    const token = await signJwsInPool(key.encodedHeader, claims, key.alg, key.privateKey);
    return { token, claims, kid: key.kid, alg: key.alg, expiresIn: TOKEN_LIFETIME_SECONDS };
  }
}

/** Why a token was refused; the caller only ever learns `invalid_token` (RFC 6750 §3.1). */
export class InvalidAccessTokenError extends Error {
  readonly code = 'invalid_token' satisfies ErrorCode;
  constructor(readonly reason: string) {
    super(reason);
  }
}

interface CachedPrincipal {
  principal: Principal;
  exp: number;
}

/**
 * Validates access tokens as RFC 9068 §4 and RFC 8725 §3 ask, in this order: compact JWS syntax; `typ` is at+jwt;
 * the key is ours, found by `kid`; the token's `alg` is the algorithm bound to that key; the signature; `iss`
 * exact; `aud` contains our audience; `exp` in the future and `iat` not in the future (with clock tolerance); the
 * claims Parley needs are present; the company it names exists. Verified tokens are cached by their exact string until `exp` (bounded LRU), so a
 * client reusing its token for an hour pays for one signature check per node.
 */
export class AccessTokenVerifier {
  private readonly cache: LruCache<string, CachedPrincipal>;
  /** Signature checks done and answers served from the cache, for metrics and tests. */
  readonly stats = { verified: 0, cacheHits: 0 };

  constructor(
    private readonly keys: SigningKeyStore,
    private readonly config: Config,
    /** Whether the company a token names exists (CompaniesService.exists). */
    private readonly companyExists: (companyId: string) => Promise<boolean>,
    /** The clock `exp` and `iat` are checked against (ms since the epoch); tests move it instead of waiting. */
    private readonly clock: () => number = Date.now,
    /** Whether a token id was revoked (RFC 7009; RevocationList): checked on every request, cached or not. */
    private readonly isRevoked: (jti: string) => boolean = () => false,
  ) {
    this.cache = new LruCache(config.oauth.tokenCacheSize);
  }

  async verify(token: string): Promise<Principal> {
    const nowSeconds = this.clock() / 1000;
    const tolerance = this.config.oauth.clockToleranceSeconds;
    const cached = this.cache.get(token);
    if (cached) {
      if (cached.exp + tolerance > nowSeconds) {
        if (this.isRevoked(cached.principal.tokenId)) throw new InvalidAccessTokenError('revoked');
        this.stats.cacheHits++;
        return cached.principal;
      }
      this.cache.delete(token);
      throw new InvalidAccessTokenError('expired');
    }
    const decoded = decodeJws(token);
    if (!decoded) throw new InvalidAccessTokenError('malformed');
    const { header, payload } = decoded;
    if (typeof header.typ !== 'string' || !isAccessTokenTyp(header.typ))
      throw new InvalidAccessTokenError('wrong_typ');
    if (header.crit !== undefined) throw new InvalidAccessTokenError('unsupported_crit');
    if (typeof header.kid !== 'string') throw new InvalidAccessTokenError('no_kid');
    const key = await this.keys.keyOrReload(header.kid);
    if (!key) throw new InvalidAccessTokenError('unknown_kid');
    if (header.alg !== key.alg) throw new InvalidAccessTokenError('wrong_alg');
    if (!verifyJwsSignature(token, key.alg, key.publicKey))
      throw new InvalidAccessTokenError('bad_signature');
    this.stats.verified++;
    const claims = checkClaims(payload, this.config, nowSeconds, tolerance);
    if (this.isRevoked(claims.jti)) throw new InvalidAccessTokenError('revoked');
    // A token signed with our key but naming no company (one minted by hand, say) is no valid token: refused here,
    // never a foreign-key failure in whatever the request would have written.
    if (!(await this.companyExists(claims.company_id))) throw new InvalidAccessTokenError('unknown_company');
    const principal: Principal = {
      clientId: claims.client_id,
      companyId: claims.company_id,
      scopes: claims.scope.split(' ').filter(Boolean),
      tokenId: claims.jti,
      ...(claims.cnf ? { jkt: claims.cnf.jkt } : {}),
    };
    this.cache.set(token, { principal, exp: claims.exp });
    return principal;
  }

  /**
   * The claims of a token this server issued that is still valid (not expired, not revoked), or `undefined`:
   * what revocation (RFC 7009) and introspection (RFC 7662) need, without telling why a token is not active.
   */
  async activeClaims(token: string): Promise<AccessTokenClaims | undefined> {
    try {
      await this.verify(token);
    } catch (err) {
      if (err instanceof InvalidAccessTokenError) return undefined;
      throw err;
    }
    return decodeJws(token)?.payload as unknown as AccessTokenClaims;
  }
}

/** RFC 9068 §4: `at+jwt`, or the full media type `application/at+jwt`; media types are case-insensitive. */
function isAccessTokenTyp(typ: string): boolean {
  const t = typ.toLowerCase();
  return t === ACCESS_TOKEN_TYP || t === `application/${ACCESS_TOKEN_TYP}`;
}

function checkClaims(
  payload: Record<string, unknown>,
  config: Config,
  nowSeconds: number,
  tolerance: number,
): AccessTokenClaims {
  if (payload.iss !== config.publicUrl) throw new InvalidAccessTokenError('wrong_iss');
  const aud = payload.aud;
  const audiences = Array.isArray(aud) ? aud : [aud];
  if (!audiences.includes(config.oauth.audience)) throw new InvalidAccessTokenError('wrong_aud');
  if (typeof payload.exp !== 'number') throw new InvalidAccessTokenError('missing_exp');
  if (payload.exp + tolerance <= nowSeconds) throw new InvalidAccessTokenError('expired');
  if (typeof payload.iat !== 'number' || payload.iat - tolerance > nowSeconds) {
    throw new InvalidAccessTokenError('issued_in_future');
  }
  if (typeof payload.nbf === 'number' && payload.nbf - tolerance > nowSeconds) {
    throw new InvalidAccessTokenError('not_yet_valid');
  }
  for (const claim of ['sub', 'client_id', 'company_id', 'jti', 'scope'] as const) {
    if (typeof payload[claim] !== 'string') throw new InvalidAccessTokenError(`missing_${claim}`);
  }
  if (payload.sub !== payload.client_id) throw new InvalidAccessTokenError('sub_mismatch');
  const cnf = payload.cnf as { jkt?: unknown } | undefined;
  if (cnf !== undefined && (typeof cnf !== 'object' || cnf === null || typeof cnf.jkt !== 'string'))
    throw new InvalidAccessTokenError('bad_cnf');
  return payload as unknown as AccessTokenClaims;
}
