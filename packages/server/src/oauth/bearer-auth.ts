import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.ts';
import type { App } from '../http/types.ts';
import { attributeToCompany } from '../logging/request-company.ts';
import { type AccessTokenVerifier, InvalidAccessTokenError } from './access-tokens.ts';
import { REALM } from './oauth-errors.ts';
import type { Principal } from './principal.ts';

export type BearerErrorCode = 'token_required' | 'invalid_request' | 'invalid_token' | 'insufficient_scope';

/**
 * An RFC 6750 §3 failure: the `WWW-Authenticate: Bearer …` challenge is the contract; the problem+json body
 * carries the same code for people and generic clients. `token_required` (no credentials at all) sends the bare
 * challenge without an error code (§3.1).
 */
export class BearerError extends AppError {
  constructor(code: BearerErrorCode, detail: string, requiredScope?: string) {
    const status = code === 'invalid_request' ? 400 : code === 'insufficient_scope' ? 403 : 401;
    const params = [`realm="${REALM}"`];
    if (code !== 'token_required') params.push(`error="${code}"`, `error_description="${detail}"`);
    if (requiredScope) params.push(`scope="${requiredScope}"`);
    super(status, code, detail, requiredScope ? { required_scope: requiredScope } : {}, {
      'www-authenticate': `Bearer ${params.join(', ')}`,
    });
  }
}

/** RFC 6750 §2.1: `Bearer` 1*SP b64token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * The one bearer step for every route that declares `config.requiredScope` (a scope, or `null` for "any valid
 * token"): routes registered after this call get an `onRequest` hook that verifies the access token, checks the
 * scope and sets `request.principal`; routes without the option (token endpoint, SDK, health) pay nothing.
 * Handlers never check tokens or scopes themselves, and scope every query to `request.principal.companyId`: a token
 * only ever reaches its own company's data.
 */
export function registerBearerAuth(app: App, verifier: AccessTokenVerifier): void {
  app.addHook('onRoute', (route) => {
    const required = route.config?.requiredScope;
    if (required === undefined) return;
    // The API reference tells clients which operations need a bearer token (OpenAPI `security`).
    route.schema = { ...route.schema, security: route.schema?.security ?? [{ bearer: [] }] };
    const bearerStep = async (request: FastifyRequest, reply: FastifyReply) => {
      const principal = await authenticate(request, (token) => verifier.verify(token));
      attributeToCompany(request, reply, principal.companyId);
      if (required !== null && !principal.scopes.includes(required)) {
        throw new BearerError('insufficient_scope', `This request needs the scope ${required}.`, required);
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
): Promise<Principal> {
  const header = request.headers.authorization;
  if (hasQueryToken(request)) {
    // §2.3 (URI query) is not supported: say so instead of ignoring a token that has already leaked into a URL.
    throw new BearerError('invalid_request', 'Send the access token in the Authorization header only.');
  }
  // §3.1: no credentials, or another scheme, is a bare challenge without an error code.
  if (header === undefined || !/^bearer(\s|$)/i.test(header)) {
    throw new BearerError('token_required', 'This request needs an access token (Authorization: Bearer).');
  }
  const match = BEARER.exec(header);
  if (!match)
    throw new BearerError('invalid_request', 'The Authorization header is not a valid Bearer credential.');
  try {
    return await verify(match[1]!);
  } catch (err) {
    if (!(err instanceof InvalidAccessTokenError)) throw err;
    throw new BearerError(
      'invalid_token',
      err.reason === 'expired' ? 'The access token expired.' : 'The access token is invalid.',
    );
  }
}

function hasQueryToken(request: FastifyRequest): boolean {
  const query = request.query as Record<string, unknown> | undefined;
  return query !== undefined && query !== null && typeof query === 'object' && 'access_token' in query;
}
