import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../http/types.ts';
import { attributeToCompany } from '../logging/request-company.ts';
import { type AccessTokenVerifier, InvalidAccessTokenError } from './access-tokens.ts';
import { BearerError } from './bearer-error.ts';
import { checkDpopBinding, type ResourceDpop } from './dpop-auth.ts';
import type { Principal } from './principal.ts';

/** RFC 6750 §2.1: `Bearer` 1*SP b64token; RFC 9449 §7.1: `DPoP` 1*SP token68, the same characters. */
const CREDENTIALS = /^(Bearer|DPoP) +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * The one bearer step for every route that declares `config.requiredScope` (a scope, or `null` for "any valid
 * token"): routes registered after this call get an `onRequest` hook that verifies the access token, checks the
 * scope and sets `request.principal`; routes without the option (token endpoint, SDK, health) pay nothing.
 * Handlers never check tokens or scopes themselves, and scope every query to `request.principal.companyId`: a token
 * only ever reaches its own company's data.
 */
export function registerBearerAuth(app: App, verifier: AccessTokenVerifier, dpop: ResourceDpop): void {
  app.addHook('onRoute', (route) => {
    const required = route.config?.requiredScope;
    if (required === undefined) return;
    // The API reference tells clients which operations need a bearer token (OpenAPI `security`).
    route.schema = { ...route.schema, security: route.schema?.security ?? [{ bearer: [] }] };
    const bearerStep = async (request: FastifyRequest, reply: FastifyReply) => {
      const principal = await authenticate(request, (token) => verifier.verify(token), dpop);
      attributeToCompany(request, reply, principal.companyId);
      if (required !== null && !principal.scopes.includes(required)) {
        throw new BearerError('insufficient_scope', `This request needs the scope ${required}.`, {
          requiredScope: required,
          scheme: principal.jkt ? 'DPoP' : 'Bearer',
        });
      }
      request.principal = principal;
    };
    // Runs before the route's own onRequest hooks (if any), so nothing sees an unauthenticated request.
    route.onRequest = [bearerStep, ...[route.onRequest ?? []].flat()];
  });
}

async function authenticate(
  request: FastifyRequest,
  verify: (token: string) => Promise<Principal>,
  dpop: ResourceDpop,
): Promise<Principal> {
  const header = request.headers.authorization;
  if (hasQueryToken(request)) {
    // §2.3 (URI query) is not supported: say so instead of ignoring a token that has already leaked into a URL.
    throw new BearerError('invalid_request', 'Send the access token in the Authorization header only.');
  }
  // §3.1: no credentials, or another scheme, is a bare challenge without an error code.
  if (header === undefined || !/^(bearer|dpop)(\s|$)/i.test(header)) {
    throw new BearerError('token_required', 'This request needs an access token (Authorization: Bearer).');
  }
  const match = CREDENTIALS.exec(header);
  const scheme = /^dpop/i.test(header) ? 'DPoP' : 'Bearer';
  if (!match)
    throw new BearerError(
      'invalid_request',
      `The Authorization header is not a valid ${scheme} credential.`,
      {
        scheme,
      },
    );
  const token = match[2]!;
  const principal = await verifyToken(token, verify, scheme);
  if (scheme === 'DPoP') return checkDpopBinding(request, token, principal, dpop);
  if (principal.jkt) {
    // RFC 9449 §7.2: a DPoP-bound token presented as a bearer token is refused, else a stolen token would work.
    throw new BearerError(
      'invalid_token',
      'This access token is DPoP-bound: send it as Authorization: DPoP.',
      {
        scheme: 'DPoP',
      },
    );
  }
  return principal;
}

async function verifyToken(
  token: string,
  verify: (token: string) => Promise<Principal>,
  scheme: 'Bearer' | 'DPoP',
): Promise<Principal> {
  try {
    return await verify(token);
  } catch (err) {
    if (!(err instanceof InvalidAccessTokenError)) throw err;
    throw new BearerError(
      'invalid_token',
      err.reason === 'expired' ? 'The access token expired.' : 'The access token is invalid.',
      { scheme },
    );
  }
}

function hasQueryToken(request: FastifyRequest): boolean {
  const query = request.query as Record<string, unknown> | undefined;
  return query !== undefined && query !== null && typeof query === 'object' && 'access_token' in query;
}
