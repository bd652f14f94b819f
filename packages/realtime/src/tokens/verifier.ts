import { exceedsJsonDepth } from '../protocol/json-depth.ts';
import { type JwtKeys, loadPublicKey, TokenError, verifyJwt } from './jwt.ts';

/**
 * How connection and subscription JWTs are verified (Centrifugo `client.token.*`, docs/protocol.md "Tokens").
 */
export interface TokenOptions {
  /** HMAC secrets for HS256/384/512; several allow rotation (the first signs nothing, any one may verify). */
  hmacSecretKeys?: string[];
  /** PEM public key for RS256/384/512. */
  rsaPublicKey?: string;
  /** PEM public key for ES256/384/512. */
  ecdsaPublicKey?: string;
  /** When set, `aud` must contain exactly this value. */
  audience?: string;
  /** When set, `iss` must equal this value. */
  issuer?: string;
  /** Claim holding the user id instead of `sub` (Centrifugo `user_id_claim`); top-level claims only. */
  userIdClaim?: string;
}

/**
 * Per-subscription option overrides carried by tokens, each written `{"value": bool}` on the wire
 * (docs/protocol.md "Connection token").
 */
export interface SubscriptionOverride {
  presence?: boolean;
  joinLeave?: boolean;
  forcePushJoinLeave?: boolean;
  forceRecovery?: boolean;
  forcePositioning?: boolean;
}

/** A server-side subscription requested by a connection token's `channels` or `subs` claim. */
export interface ServerSubscriptionClaim {
  /** Raw JSON that becomes `chan_info`. */
  info?: string;
  /** Raw JSON returned as the subscribe result `data`. */
  data?: string;
  override?: SubscriptionOverride;
}

export interface ConnectTokenClaims {
  /** `sub` (or the configured user id claim); "" means anonymous. */
  user: string;
  /** When the connection expires, unix seconds; 0 = never (`expire_at: 0` disables expiry). */
  expireAt: number;
  /** Raw JSON from `info` / `b64info`; becomes `conn_info`. */
  info?: string;
  /** Server-side subscriptions from `subs` (preferred) or `channels`. */
  subs: Record<string, ServerSubscriptionClaim>;
  /** Server-only metadata (`meta`), never sent to clients. */
  meta?: unknown;
  /** Every claim as decoded, for hooks that need custom ones. */
  claims: Record<string, unknown>;
}

export interface SubscribeTokenClaims {
  user: string;
  channel: string;
  /** When set, the token is valid only for this client id. */
  client?: string;
  /** Unix seconds; 0 = the subscription never expires. */
  expireAt: number;
  info?: string;
  data?: string;
  override?: SubscriptionOverride;
  claims: Record<string, unknown>;
}

function invalid(message: string): never {
  throw new TokenError('token_invalid', message);
}

function optionalString(claims: Record<string, unknown>, name: string): string | undefined {
  const value = claims[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') invalid(`${name} must be a string`);
  return value;
}

function optionalNumber(claims: Record<string, unknown>, name: string): number | undefined {
  const value = claims[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) invalid(`${name} must be a number`);
  return value;
}

/** `info`/`data` as raw JSON text, or decoded from their `b64` twins (which must hold JSON in this protocol). */
function rawJsonClaim(claims: Record<string, unknown>, name: string): string | undefined {
  const b64 = optionalString(claims, `b64${name}`);
  if (b64 !== undefined && b64 !== '') {
    const text = Buffer.from(b64, 'base64').toString('utf8');
    if (exceedsJsonDepth(text)) invalid(`b64${name} nests too deeply`);
    try {
      return JSON.stringify(JSON.parse(text));
    } catch {
      invalid(`b64${name} does not hold JSON`);
    }
  }
  const value = claims[name];
  if (value === undefined || value === null) return undefined;
  return JSON.stringify(value);
}

/** `override` as tokens, proxies and the server API write it (`{"presence": {"value": true}, …}`); bad → TokenError. */
export function parseOverride(value: unknown): SubscriptionOverride | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) invalid('override must be an object');
  const source = value as Record<string, unknown>;
  const flag = (name: string): boolean | undefined => {
    const entry = source[name];
    if (entry === undefined || entry === null) return undefined;
    if (typeof entry !== 'object') invalid(`override.${name} must be {"value": bool}`);
    return (entry as { value?: unknown }).value === true;
  };
  const override: SubscriptionOverride = {};
  const presence = flag('presence');
  if (presence !== undefined) override.presence = presence;
  const joinLeave = flag('join_leave');
  if (joinLeave !== undefined) override.joinLeave = joinLeave;
  const forcePush = flag('force_push_join_leave');
  if (forcePush !== undefined) override.forcePushJoinLeave = forcePush;
  const recovery = flag('force_recovery');
  if (recovery !== undefined) override.forceRecovery = recovery;
  const positioning = flag('force_positioning');
  if (positioning !== undefined) override.forcePositioning = positioning;
  return override;
}

/**
 * `expire_at` overrides `exp`; `expire_at: 0` switches expiry off (docs/protocol.md "Connection token", CFGO
 * VerifyConnectToken).
 */
function expiryOf(claims: Record<string, unknown>): number {
  const expireAt = optionalNumber(claims, 'expire_at');
  if (expireAt !== undefined) return expireAt > 0 ? Math.floor(expireAt) : 0;
  const exp = optionalNumber(claims, 'exp');
  return exp !== undefined ? Math.floor(exp) : 0;
}

/**
 * Adds what a subscription carries besides its channel, from a subscription token's claims or a connection
 * token's `subs` entry alike: `info` and `data` (raw JSON) and the channel option `override`.
 */
function withSubscriptionExtras<T extends ServerSubscriptionClaim>(
  target: T,
  claims: Record<string, unknown>,
): T {
  const info = rawJsonClaim(claims, 'info');
  if (info !== undefined) target.info = info;
  const data = rawJsonClaim(claims, 'data');
  if (data !== undefined) target.data = data;
  const override = parseOverride(claims.override);
  if (override !== undefined) target.override = override;
  return target;
}

function parseServerSubscriptions(claims: Record<string, unknown>): Record<string, ServerSubscriptionClaim> {
  const subs: Record<string, ServerSubscriptionClaim> = Object.create(null);
  const map = claims.subs;
  if (map !== undefined && map !== null) {
    if (typeof map !== 'object' || Array.isArray(map)) invalid('subs must be an object');
    for (const [channel, raw] of Object.entries(map as Record<string, unknown>)) {
      const options = (raw ?? {}) as Record<string, unknown>;
      if (typeof options !== 'object' || Array.isArray(options)) invalid('subs entries must be objects');
      subs[channel] = withSubscriptionExtras({}, options);
    }
    if (Object.keys(subs).length > 0) return subs;
  }
  const channels = claims.channels;
  if (channels !== undefined && channels !== null) {
    if (!Array.isArray(channels) || channels.some((c) => typeof c !== 'string')) {
      invalid('channels must be an array of strings');
    }
    for (const channel of channels as string[]) subs[channel] = {};
  }
  return subs;
}

/**
 * Verifies connection and subscription JWTs with Centrifugo's rules (docs/protocol.md "Tokens"; CFGO
 * `token_verifier_jwt.go`).
 */
export class TokenVerifier {
  private readonly keys: JwtKeys;
  private readonly audience: string | undefined;
  private readonly issuer: string | undefined;
  private readonly userIdClaim: string | undefined;

  constructor(options: TokenOptions = {}) {
    this.keys = {
      hmacSecretKeys: (options.hmacSecretKeys ?? [])
        .filter((k) => k !== '')
        .map((k) => Buffer.from(k, 'utf8')),
    };
    if (options.rsaPublicKey) this.keys.rsaPublicKey = loadPublicKey(options.rsaPublicKey, 'rsa');
    if (options.ecdsaPublicKey) this.keys.ecdsaPublicKey = loadPublicKey(options.ecdsaPublicKey, 'ec');
    this.audience = options.audience || undefined;
    this.issuer = options.issuer || undefined;
    this.userIdClaim = options.userIdClaim || undefined;
  }

  /** Whether any verification key is configured; without one every token is invalid. */
  get enabled(): boolean {
    return this.keys.hmacSecretKeys.length > 0 || !!this.keys.rsaPublicKey || !!this.keys.ecdsaPublicKey;
  }

  verifyConnectToken(token: string, nowMs = Date.now()): ConnectTokenClaims {
    const claims = this.verifyCommon(token);
    // A connection token must never carry `channel`: that would let a subscription token connect (CFGO).
    if (claims.channel !== undefined && claims.channel !== '')
      invalid('connection token must not contain channel');
    this.checkTimes(claims, nowMs);
    const result: ConnectTokenClaims = {
      user: this.userOf(claims),
      expireAt: expiryOf(claims),
      subs: parseServerSubscriptions(claims),
      claims,
    };
    const info = rawJsonClaim(claims, 'info');
    if (info !== undefined) result.info = info;
    if (claims.meta !== undefined && claims.meta !== null) result.meta = claims.meta;
    return result;
  }

  verifySubscribeToken(token: string, nowMs = Date.now()): SubscribeTokenClaims {
    const claims = this.verifyCommon(token);
    this.checkTimes(claims, nowMs);
    const channel = optionalString(claims, 'channel');
    if (!channel) invalid('channel claim is required for subscription token');
    const result: SubscribeTokenClaims = {
      user: this.userOf(claims),
      channel,
      expireAt: expiryOf(claims),
      claims,
    };
    const client = optionalString(claims, 'client');
    if (client) result.client = client;
    return withSubscriptionExtras(result, claims);
  }

  private verifyCommon(token: string): Record<string, unknown> {
    if (!this.enabled) invalid('no token verification key configured');
    const { payload } = verifyJwt(token, this.keys);
    if (this.audience !== undefined) {
      const aud = payload.aud;
      const audiences = Array.isArray(aud) ? aud : aud === undefined ? [] : [aud];
      if (!audiences.includes(this.audience)) invalid('audience mismatch');
    }
    if (this.issuer !== undefined && payload.iss !== this.issuer) invalid('issuer mismatch');
    return payload;
  }

  /** `exp` in the past or `nbf` in the future → expired (109), as the Go JWT library decides. */
  private checkTimes(claims: Record<string, unknown>, nowMs: number): void {
    const now = nowMs / 1000;
    const exp = optionalNumber(claims, 'exp');
    const nbf = optionalNumber(claims, 'nbf');
    if ((exp !== undefined && now >= exp) || (nbf !== undefined && now < nbf)) {
      throw new TokenError('token_expired', 'token expired');
    }
  }

  private userOf(claims: Record<string, unknown>): string {
    const value = claims[this.userIdClaim ?? 'sub'];
    if (value === undefined || value === null) return '';
    if (typeof value === 'string') return value;
    if (this.userIdClaim !== undefined && (typeof value === 'number' || typeof value === 'boolean')) {
      return String(value);
    }
    return invalid('user id claim must be a string');
  }
}
