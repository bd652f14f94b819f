import { assertionIssuer, JWT_BEARER_ASSERTION } from './client-assertion.ts';
import { type FormParams, formDecode } from './form-body.ts';
import { invalidRequest } from './oauth-errors.ts';

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';
export const CLIENT_AUTH_METHODS: readonly ClientAuthMethod[] = [
  'client_secret_basic',
  'client_secret_post',
  'private_key_jwt',
];

export type PresentedCredentials =
  | { clientId: string; secret: string; method: 'client_secret_basic' | 'client_secret_post' }
  /** RFC 7523 §2.2; `clientId` is the assertion's `iss` (checked against `sub` and any `client_id` later). */
  | { clientId: string; assertion: string; method: 'private_key_jwt' };

/**
 * Reads the client's credentials from the request (RFC 6749 §2.3.1).
 *
 * - HTTP Basic (`client_secret_basic`, the method the spec names): both halves are form-urlencoded before
 *   base64 (App. B), so each is form-decoded after splitting at the first `:`.
 * - Body parameters (`client_secret_post`): RFC 6749 allows them (NOT RECOMMENDED); Parley accepts them because
 *   common client libraries default to them (oidc-provider, Keycloak and Okta accept them too). They are equally
 *   protected: same rate limits, never logged.
 * - Using both in one request is an `invalid_request` (§2.3: "MUST NOT use more than one authentication method");
 *   a body `client_id` next to Basic must name the same client.
 * Returns `undefined` when the request carries no client authentication at all.
 */
export function readClientCredentials(
  authorization: string | undefined,
  form: FormParams,
): PresentedCredentials | undefined {
  if (form.client_assertion_type !== undefined || form.client_assertion !== undefined) {
    return readAssertion(authorization, form);
  }
  if (authorization !== undefined) {
    if (form.client_secret !== undefined) {
      throw invalidRequest('Client authentication must use only one method (Basic or body parameters).');
    }
    const basic = parseBasic(authorization);
    if (form.client_id !== undefined && form.client_id !== basic.clientId) {
      throw invalidRequest('The client_id parameter does not match the Authorization header.');
    }
    return { ...basic, method: 'client_secret_basic' };
  }
  if (form.client_secret !== undefined) {
    if (form.client_id === undefined)
      throw invalidRequest('The client_secret parameter needs a client_id parameter.');
    if (!VSCHARS.test(form.client_id) || !VSCHARS.test(form.client_secret)) {
      throw invalidRequest('The client_id and client_secret parameters must be printable ASCII.');
    }
    return { clientId: form.client_id, secret: form.client_secret, method: 'client_secret_post' };
  }
  return undefined;
}

/**
 * RFC 7521 §4.2: `client_assertion_type` must be the JWT bearer type and `client_assertion` one JWT; no other
 * method in the same request (RFC 6749 §2.3); a `client_id` parameter, when sent, must name the assertion's issuer.
 */
function readAssertion(authorization: string | undefined, form: FormParams): PresentedCredentials {
  if (authorization !== undefined || form.client_secret !== undefined) {
    throw invalidRequest('Client authentication must use only one method.');
  }
  if (form.client_assertion_type !== JWT_BEARER_ASSERTION) {
    throw invalidRequest(`The client_assertion_type must be ${JWT_BEARER_ASSERTION}.`);
  }
  if (form.client_assertion === undefined || form.client_assertion === '') {
    throw invalidRequest('The client_assertion parameter is required.');
  }
  const issuer = assertionIssuer(form.client_assertion);
  if (issuer === undefined) throw invalidRequest('The client_assertion is not a JWT with an iss claim.');
  if (form.client_id !== undefined && form.client_id !== issuer) {
    throw invalidRequest('The client_id parameter does not match the client assertion.');
  }
  return { clientId: issuer, assertion: form.client_assertion, method: 'private_key_jwt' };
}

const BASE64 = /^([A-Za-z0-9+/]+)(={0,2})$/;
/** RFC 6749 App. A.1/A.2: client_id and client_secret are VSCHARs (%x20-7E). */
const VSCHARS = /^[\x20-\x7e]+$/;

function parseBasic(header: string): { clientId: string; secret: string } {
  const match = /^([A-Za-z]+) +(\S+) *$/.exec(header);
  if (!match || match[1]!.toLowerCase() !== 'basic') {
    throw invalidRequest('The Authorization header must use the Basic scheme at the token endpoint.');
  }
  const encoded = match[2]!;
  if (!isBase64(encoded)) {
    throw invalidRequest('The Authorization header is not valid Basic credentials.');
  }
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) throw invalidRequest('The Authorization header is not valid Basic credentials.');
  const clientId = formDecode(decoded.slice(0, colon));
  const secret = formDecode(decoded.slice(colon + 1));
  if (!VSCHARS.test(clientId) || !VSCHARS.test(secret)) {
    throw invalidRequest('The Basic credentials must be a client_id and a client_secret.');
  }
  return { clientId, secret };
}

/** Standard base64, padded or not (some clients omit the padding), but never with an impossible length. */
function isBase64(text: string): boolean {
  const match = BASE64.exec(text);
  if (!match) return false;
  const [, body, padding] = match as unknown as [string, string, string];
  if (padding === '') return body.length % 4 !== 1;
  return (body.length + padding.length) % 4 === 0 && padding.length === 4 - (body.length % 4);
}
