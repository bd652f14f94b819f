import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit.service.ts';
import type { Config } from '../config/schema.ts';
import type { RateLimiter, RateLimitRule, RateLimitState } from '../ratelimit/index.ts';
import type { AccessTokenIssuer } from './access-tokens.ts';
import type { ApiClient, ApiClientsService, AuthResult } from './api-clients.service.ts';
import type { AuditBatcher } from './audit-batcher.ts';
import { type AssertionClaims, AssertionError, verifyClientAssertion } from './client-assertion.ts';
import { type PresentedCredentials, readClientCredentials } from './client-auth.ts';
import { type ClientKeySets, KeySetUnavailableError } from './client-key-sets.ts';
import type { ClientQuotas, QuotaCharge } from './client-quotas.ts';
import { isClientIdSyntax } from './credentials.ts';
import { type DpopProofs, dpopProofRequired, tokenEndpointDpopError } from './dpop.ts';
import { DpopProofError, type DpopRequest, type VerifiedProof } from './dpop-proof.ts';
import type { FormParams } from './form-body.ts';
import { invalidClient, invalidRequest, OAuthError, slowDown } from './oauth-errors.ts';

export interface TokenRequest {
  form: FormParams;
  authorization: string | undefined;
  ip: string;
  /** The `DPoP` header and what its proof must name (`htm`, `htu`); revocation and introspection pass none. */
  dpop?: Omit<DpopRequest, 'accessToken'>;
}

/** RFC 6749 §5.1 success body. No refresh token, ever (§4.4.3). */
export interface TokenResponse {
  access_token: string;
  /** `DPoP` when a proof bound the token (RFC 9449 §5.1), else `Bearer`. */
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  scope: string;
}

/** A granted token request: the body, and the `RateLimit` headers of the client's token quota (if counted). */
export interface TokenGrant {
  response: TokenResponse;
  headers: Record<string, string>;
}

export const CLIENT_CREDENTIALS = 'client_credentials';
export const TOKEN_PATH = '/platform/v1/auth/token/client-credentials';
/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
const MINUTE_MS = 60_000;

/** One failed-authentication budget: its audit name, rate-limit key and rule, and the audited subject. */
interface FailureBudget {
  limit: 'auth_failures_per_ip_and_client' | 'auth_failures_per_ip';
  key: string;
  rule: RateLimitRule;
  subject: string;
}

/**
 * The client-credentials grant (RFC 6749 §4.4), in this order:
 * 1. request syntax (§3.2, §4.4.2): body present, `grant_type` present and `client_credentials`, credentials
 *    readable and given by one method only → `invalid_request` / `unsupported_grant_type`;
 * 2. abuse control: an address that failed authentication too often for this client id, or for any, in the current
 *    minute → 429;
 * 3. client authentication (§2.3.1) → `invalid_client` (401, generic description, reason kept in the audit log);
 * 4. scope (§3.3): omitted → all of the client's scopes; otherwise each must be one of them → `invalid_scope`;
 * 5. DPoP (RFC 9449 §5): a `DPoP` proof, when sent, must be valid (`invalid_dpop_proof`, `use_dpop_nonce`) and
 *    binds the token to its key (`cnf.jkt`); a client whose DPoP is `required` must send one;
 * 6. the per-client token quota (client-quotas.ts) → 429;
 * 7. mint the JWT, record `token.issued` (batched, see AuditBatcher), refresh `last_used_at`.
 */
export class TokenEndpoint {
  constructor(
    private readonly clients: ApiClientsService,
    private readonly issuer: AccessTokenIssuer,
    private readonly limiter: RateLimiter,
    private readonly quotas: ClientQuotas,
    private readonly audit: AuditLog,
    private readonly auditBatcher: AuditBatcher,
    private readonly config: Config,
    private readonly logger: Logger,
    private readonly dpop: DpopProofs,
    private readonly clientKeys: ClientKeySets,
  ) {}

  async handle(request: TokenRequest): Promise<TokenGrant> {
    const { form } = request;
    if (form.grant_type === undefined) throw invalidRequest('The grant_type parameter is required.');
    if (form.grant_type !== CLIENT_CREDENTIALS) {
      throw new OAuthError('unsupported_grant_type', 'Only the client_credentials grant is supported.');
    }
    const client = await this.authenticateClient(request);
    const scopes = grantedScopes(form.scope, client.scopes);
    const proof = await this.dpopProof(request, client);
    const quota = await this.chargeTokenQuota(client, request.ip);

    const issued = await this.issuer.issue({
      clientId: client.clientId,
      companyId: client.companyId,
      scopes,
      jkt: proof?.jkt,
    });
    this.auditBatcher.record({
      type: 'token.issued',
      companyId: client.companyId,
      actor: `client:${client.clientId}`,
      subject: client.clientId,
      ip: request.ip,
      details: {
        client_id: client.clientId,
        scopes,
        jti: issued.claims.jti,
        kid: issued.kid,
        exp: issued.claims.exp,
        ...(proof ? { jkt: proof.jkt } : {}),
      },
    });
    await this.clients.touch(client.clientId);
    const response: TokenResponse = {
      access_token: issued.token,
      token_type: proof ? 'DPoP' : 'Bearer',
      expires_in: issued.expiresIn,
      scope: issued.claims.scope,
    };
    return { response, headers: quota?.headers ?? {} };
  }

  /** The request's verified DPoP proof, if any (RFC 9449 §5); refuses a `required` client without one. */
  private async dpopProof(request: TokenRequest, client: ApiClient): Promise<VerifiedProof | undefined> {
    let proof: VerifiedProof | undefined;
    try {
      proof = request.dpop ? await this.dpop.check(request.dpop) : undefined;
    } catch (err) {
      if (!(err instanceof DpopProofError)) throw err;
      this.logger.debug({ client_id: client.clientId, reason: err.message }, 'DPoP proof refused');
      throw tokenEndpointDpopError(err, this.dpop.nonces);
    }
    if (!proof && client.dpop === 'required') throw dpopProofRequired();
    return proof;
  }

  /**
   * Client authentication as at the token endpoint (RFC 6749 §2.3), with the same failure budgets: also what the
   * revocation (RFC 7009 §2.1) and introspection (RFC 7662 §2.1) endpoints require.
   */
  async authenticateClient(request: TokenRequest): Promise<ApiClient> {
    const credentials = readClientCredentials(request.authorization, request.form);
    await this.refuseWhileBlocked(credentials, request.ip);
    return this.authenticate(credentials, request.ip);
  }

  /**
   * The failed-authentication budgets, each a minute long (docs/config.md "OAuth"): one per (client address, client
   * id) — requests without a readable client id share the address's `-` — and a much larger one per address. An
   * address guessing one client's secret is stopped at the first, without touching the other clients behind the
   * same address (other tenants behind one NAT or proxy); an address trying many client ids at the second. Nobody
   * can lock a client out from addresses they do not share.
   */
  private failureBudgets(ip: string, clientId: string | undefined): FailureBudget[] {
    const { authFailuresPerMinute, authFailuresPerMinutePerIp } = this.config.oauth;
    return [
      {
        limit: 'auth_failures_per_ip_and_client',
        key: `oauth:auth_failures:ip_client:${clientId ?? '-'}:${ip}`,
        rule: { limit: authFailuresPerMinute, windowMs: MINUTE_MS },
        subject: clientId ?? ip,
      },
      {
        limit: 'auth_failures_per_ip',
        key: `oauth:auth_failures:ip:${ip}`,
        rule: { limit: authFailuresPerMinutePerIp, windowMs: MINUTE_MS },
        subject: ip,
      },
    ];
  }

  /** Refuses before checking any secret while a failure budget of this request is spent (RFC 6749 §2.3.1). */
  private async refuseWhileBlocked(credentials: PresentedCredentials | undefined, ip: string): Promise<void> {
    const clientId = credentials && isClientIdSyntax(credentials.clientId) ? credentials.clientId : undefined;
    const states = await Promise.all(
      this.failureBudgets(ip, clientId).map((budget) => this.limit('peek', budget.key, budget.rule)),
    );
    for (const state of states) {
      if (state && !state.allowed) throw slowDown(state.retryAfterSeconds);
    }
  }

  private async authenticate(credentials: PresentedCredentials | undefined, ip: string): Promise<ApiClient> {
    if (!credentials) {
      await this.recordFailure(undefined, 'no_credentials', undefined, ip);
      throw invalidClient();
    }
    const result =
      credentials.method === 'private_key_jwt'
        ? await this.authenticateAssertion(credentials.clientId, credentials.assertion)
        : await this.clients.authenticate(credentials.clientId, credentials.secret);
    if (result.ok) {
      // last_used_at of the secret: gathered in memory, written about once a second (no write per grant).
      if (result.secretId) this.clients.recordSecretUse(result.secretId);
      return result.client;
    }
    const clientId = isClientIdSyntax(credentials.clientId) ? credentials.clientId : undefined;
    await this.recordFailure(clientId, result.reason, result.client, ip, credentials.method);
    throw invalidClient();
  }

  /**
   * `private_key_jwt` (RFC 7523 §3): the client named by the assertion's `iss`, its signature by one of the client's
   * registered keys, the claims, and the `jti` used once only across the cluster (the store's primary key decides
   * between nodes). The audience is this token endpoint's URL or the issuer (PARLEY_PUBLIC_URL).
   */
  private async authenticateAssertion(clientId: string, assertion: string): Promise<AuthResult> {
    const found = await this.clients.findForAssertion(clientId);
    if (!found.ok) return found;
    const { client } = found;
    try {
      const claims = await this.verifyAssertion(assertion, client);
      if (!(await this.clients.claimAssertionJti(client.clientId, claims.jti, claims.exp))) {
        throw new AssertionError('jti_replayed');
      }
    } catch (err) {
      if (err instanceof KeySetUnavailableError) return { ok: false, reason: 'jwks_unavailable', client };
      if (!(err instanceof AssertionError)) throw err;
      this.logger.debug({ client_id: client.clientId, reason: err.message }, 'client assertion refused');
      return { ok: false, reason: 'invalid_assertion', client };
    }
    return { ok: true, client };
  }

  /**
   * The assertion checked against the client's keys; a key the known set lacks (a `jwks_uri` client that rotated)
   * fetches the set again, at most every few seconds per client (ClientKeySets), and tries once more.
   */
  private async verifyAssertion(assertion: string, client: ApiClient): Promise<AssertionClaims> {
    const verify = (keys: readonly Record<string, unknown>[]) =>
      verifyClientAssertion(assertion, {
        clientId: client.clientId,
        keys,
        audiences: [`${this.config.publicUrl}${TOKEN_PATH}`, this.config.publicUrl],
        nowSeconds: Date.now() / 1000,
        toleranceSeconds: this.config.oauth.clockToleranceSeconds,
      });
    try {
      return verify(await this.clientKeys.keysOf(client));
    } catch (err) {
      if (!(err instanceof AssertionError) || err.message !== 'no_matching_key') throw err;
      const fresh = await this.clientKeys.refetched(client);
      if (!fresh) throw err;
      return verify(fresh);
    }
  }

  private async recordFailure(
    clientId: string | undefined,
    reason: string,
    client: ApiClient | undefined,
    ip: string,
    method?: string,
  ): Promise<void> {
    await this.audit.record({
      type: 'client_auth.failed',
      companyId: client?.companyId ?? null,
      actor: clientId ? `client:${clientId}` : null,
      subject: clientId ?? null,
      ip,
      details: { client_id: clientId ?? null, reason, method: method ?? null },
    });
    // Each budget records `rate_limit.exceeded` once per window, when its count reaches the limit.
    for (const budget of this.failureBudgets(ip, clientId)) {
      const state = await this.limit('hit', budget.key, budget.rule);
      if (state && state.count === state.limit)
        await this.recordLimited(budget.limit, state, {
          ip,
          subject: budget.subject,
          companyId: client?.companyId,
        });
    }
  }

  /**
   * The client's token quota (its own, or `oauth.tokensPerMinute`): answers carry its `RateLimit` headers; over
   * it, 429 `slow_down` with `code: client_quota_exceeded` and `Retry-After` (docs/machine-access.md "Quotas").
   */
  private async chargeTokenQuota(client: ApiClient, ip: string): Promise<QuotaCharge | undefined> {
    const charge = await this.quotas.charge('tokens', client.clientId, client.quotas);
    if (!charge || charge.state.allowed) return charge;
    const { state } = charge;
    // Recorded once per window: when the count first passes the limit.
    if (state.count === state.limit + 1) {
      await this.recordLimited('tokens_per_client', state, {
        ip,
        subject: client.clientId,
        companyId: client.companyId,
      });
    }
    throw slowDown(state.retryAfterSeconds, charge.headers, 'client_quota_exceeded');
  }

  private async recordLimited(
    limit: string,
    state: RateLimitState,
    where: { ip: string; subject: string; companyId?: string },
  ): Promise<void> {
    await this.audit.record({
      type: 'rate_limit.exceeded',
      companyId: where.companyId ?? null,
      actor: null,
      subject: where.subject,
      ip: where.ip,
      details: {
        limit,
        max: state.limit,
        window_seconds: MINUTE_MS / 1000,
        retry_after: state.retryAfterSeconds,
      },
    });
  }

  /**
   * Rate limits fail open: should the limiter fail, the request goes on and a warning is logged. (A Redis outage is
   * no failure: the limiter counts per node meanwhile, docs/config.md "Rate limits while Redis is down".) Secrets
   * are 256-bit random, so the limits guard against load and noise, not against guessing; nothing about the
   * limiter may stop every integration from getting tokens.
   */
  private async limit(
    op: 'hit' | 'peek',
    key: string,
    rule: RateLimitRule,
  ): Promise<RateLimitState | undefined> {
    try {
      return op === 'hit' ? await this.limiter.hit(key, rule) : await this.limiter.peek(key, rule);
    } catch (err) {
      this.logger.warn(
        { err: { message: (err as Error).message } },
        'rate limiter unavailable; request not limited',
      );
      return undefined;
    }
  }
}

/**
 * RFC 6749 §3.3: space-delimited, case-sensitive scope tokens. Omitted → every scope of the client (documented
 * default, docs/design.md "Scopes"). A requested scope the client does not hold → `invalid_scope` (no silent
 * down-scoping). The response names the granted scopes in the order requested, without duplicates.
 */
export function grantedScopes(requested: string | undefined, clientScopes: readonly string[]): string[] {
  if (requested === undefined) return [...clientScopes];
  const tokens = [...new Set(requested.split(' ').filter(Boolean))];
  if (tokens.length === 0) return [...clientScopes];
  if (!tokens.every((t) => SCOPE_TOKEN.test(t)))
    throw new OAuthError('invalid_scope', 'The scope parameter is malformed.');
  if (!tokens.every((t) => clientScopes.includes(t))) {
    throw new OAuthError('invalid_scope', 'The requested scope is not granted to this client.');
  }
  return tokens;
}
