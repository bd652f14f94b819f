import { type JwtKeys, TokenError, verifyJwt } from '@parley/realtime';
import { readVisitorAttributes } from '@parley/webchat-protocol';
import { isUnsafeString } from '../../http/unsafe-text.ts';
import type { VerifiedVisitor } from '../visitor.ts';

/** The longest life a visitor token may claim: `exp` at most this far ahead (plus the clock tolerance). */
const MAX_VISITOR_TOKEN_LIFETIME_SECONDS = 24 * 3600;
/** `sub` is the integrator's user id, at most this many characters (Unicode code points). */
const MAX_VISITOR_ID_LENGTH = 255;
const MAX_NAME_LENGTH = 200;
const MAX_EMAIL_LENGTH = 320;
/** No honest visitor token is near this long; a longer one is refused before it is decoded. */
const MAX_TOKEN_LENGTH = 8192;

/** Why a visitor token was refused; the message names the rule, never the token or a claim's value. */
export class VisitorTokenRefusal extends Error {
  override readonly name = 'VisitorTokenRefusal';
}

export interface VerifyOptions {
  /** The channel's identity secrets that may have signed it (current, and the previous one within its 24 h). */
  secrets: readonly string[];
  nowSeconds: number;
  /** Leeway for `exp`, `nbf` and `iat` between the integrator's clock and ours. */
  toleranceSeconds: number;
}

/**
 * Verifies a visitor token the way access tokens are verified (docs/design.md "Visitor identity"): a compact JWS whose
 * algorithm is pinned to HS256 whatever its header says (RFC 8725 §3.1; `none`, HS512 and asymmetric algorithms are
 * refused), keyed with each secret string's UTF-8 bytes (what jose and jsonwebtoken do with a string secret), the
 * signature compared in constant time against every secret (the realtime engine's one JWS codec,
 * packages/realtime/src/tokens/jwt.ts); `typ`, when present, `JWT`; no `crit` extensions; `exp` required, not past
 * and at most 24 h ahead; `nbf` and `iat` not in the future; `sub` 1–255 characters; optional string `name` and
 * `email`. Every clock comparison allows `toleranceSeconds`.
 */
export function verifyVisitorToken(token: string, options: VerifyOptions): VerifiedVisitor {
  if (token.length > MAX_TOKEN_LENGTH) throw new VisitorTokenRefusal('The visitor token is too long.');
  const keys: JwtKeys = {
    hmacSecretKeys: options.secrets.map((s) => Buffer.from(s, 'utf8')),
    algorithms: ['HS256'],
  };
  let header: Record<string, unknown>;
  let claims: Record<string, unknown>;
  try {
    ({ header, payload: claims } = verifyJwt(token, keys));
  } catch (err) {
    if (err instanceof TokenError) throw new VisitorTokenRefusal(refusalOf(err.message));
    throw err;
  }
  checkHeader(header);
  checkTimes(claims, options);
  return {
    id: requiredId(claims.sub),
    name: optionalText(claims, 'name', MAX_NAME_LENGTH),
    email: optionalText(claims, 'email', MAX_EMAIL_LENGTH),
    attributes: attributesOf(claims.attributes),
  };
}

/** The optional `attributes` claim (at most 20 short values, @parley/webchat-protocol visitor-attributes.ts). */
function attributesOf(value: unknown) {
  if (value === undefined || value === null) return null;
  const reading = readVisitorAttributes(value);
  if (reading.problem !== undefined) throw new VisitorTokenRefusal(`The visitor token’s ${reading.problem}`);
  return reading.attributes;
}

/** The codec's reasons in words for integrators (it never includes token material either). */
function refusalOf(reason: string): string {
  if (
    reason.startsWith('algorithm') ||
    reason.startsWith('unsupported algorithm') ||
    reason === 'missing alg'
  )
    return 'The visitor token must be signed with HS256.';
  if (reason === 'bad signature')
    return 'The visitor token signature does not match the channel’s identity secret.';
  return 'The visitor token is not a well-formed JWT.';
}

function checkHeader(header: Record<string, unknown>): void {
  const typ = header.typ;
  if (typ !== undefined && !(typeof typ === 'string' && /^(application\/)?jwt$/i.test(typ)))
    throw new VisitorTokenRefusal('The visitor token’s typ header must be JWT when present.');
  // RFC 7515 §4.1.11: an extension the recipient does not understand makes the token invalid.
  if (header.crit !== undefined)
    throw new VisitorTokenRefusal('The visitor token uses unsupported crit headers.');
}

function checkTimes(claims: Record<string, unknown>, options: VerifyOptions): void {
  const { nowSeconds: now, toleranceSeconds: tolerance } = options;
  const exp = claims.exp;
  if (exp === undefined) throw new VisitorTokenRefusal('The visitor token has no exp claim.');
  if (typeof exp !== 'number' || !Number.isFinite(exp))
    throw new VisitorTokenRefusal('The visitor token’s exp must be a number (seconds since the epoch).');
  if (exp + tolerance <= now) throw new VisitorTokenRefusal('The visitor token has expired.');
  if (exp - now > MAX_VISITOR_TOKEN_LIFETIME_SECONDS + tolerance)
    throw new VisitorTokenRefusal('The visitor token’s exp is more than 24 hours ahead.');
  for (const name of ['nbf', 'iat'] as const) {
    const value = claims[name];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw new VisitorTokenRefusal(
        `The visitor token’s ${name} must be a number (seconds since the epoch).`,
      );
    if (value - tolerance > now)
      throw new VisitorTokenRefusal(`The visitor token’s ${name} is in the future.`);
  }
}

function requiredId(sub: unknown): string {
  if (typeof sub !== 'string' || sub.length === 0)
    throw new VisitorTokenRefusal(
      'The visitor token needs a sub claim (your user id) as a non-empty string.',
    );
  if ([...sub].length > MAX_VISITOR_ID_LENGTH)
    throw new VisitorTokenRefusal(
      `The visitor token’s sub is longer than ${MAX_VISITOR_ID_LENGTH} characters.`,
    );
  if (isUnsafeString(sub) || /\p{Cc}/u.test(sub))
    throw new VisitorTokenRefusal('The visitor token’s sub holds control characters or unpaired surrogates.');
  return sub;
}

function optionalText(claims: Record<string, unknown>, name: string, max: number): string | null {
  const value = claims[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || [...value].length > max || isUnsafeString(value))
    throw new VisitorTokenRefusal(`The visitor token’s ${name} must be text of at most ${max} characters.`);
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}
