import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit.service.ts';
import type { Config } from '../config/schema.ts';
import { AppError } from '../errors/app-error.ts';
import { dependencyUnavailable, RETRY_AFTER_SECONDS } from '../errors/unavailable.ts';
import { parseBodyText } from '../http/body-text.ts';
import type { App } from '../http/types.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { RateLimiter } from '../ratelimit/index.ts';
import type { Tracing } from '../tracing/tracing.ts';
import { type FormParams, parseForm } from './form-body.ts';
import type { OAuthServices } from './oauth.services.ts';
import { invalidRequest, OAuthError, sendOAuthError, temporarilyUnavailable } from './oauth-errors.ts';
import { TOKEN_PATH, TokenEndpoint } from './token-endpoint.ts';

export { TOKEN_PATH };

const FORM = 'application/x-www-form-urlencoded';
/** A token request is a few hundred bytes; anything much larger is not one. */
const TOKEN_BODY_LIMIT = 8 * 1024;

const OAuthErrorBody = Type.Object(
  {
    error: Type.String({ description: 'RFC 6749 §5.2 error code', examples: ['invalid_client'] }),
    error_description: Type.String(),
    code: Type.Optional(
      Type.String({ description: 'Parley code when it says more, e.g. store_unavailable' }),
    ),
  },
  { description: 'RFC 6749 §5.2 error response' },
);

const TokenForm = Type.Object(
  {
    grant_type: Type.Optional(
      Type.String({ description: 'Must be client_credentials.', examples: ['client_credentials'] }),
    ),
    scope: Type.Optional(
      Type.String({
        description: 'Space-separated scopes; omitted means all of the client’s scopes.',
        examples: ['connector:write'],
      }),
    ),
    client_id: Type.Optional(
      Type.String({ description: 'Only with client_secret_post (body credentials).' }),
    ),
    client_secret: Type.Optional(
      Type.String({ description: 'Only with client_secret_post (body credentials).', writeOnly: true }),
    ),
  },
  { additionalProperties: true },
);

const TokenResponseBody = Type.Object({
  access_token: Type.String({ description: 'RFC 9068 JWT access token' }),
  token_type: Type.Union([Type.Literal('Bearer'), Type.Literal('DPoP')], {
    description: 'DPoP when a DPoP proof bound the token (RFC 9449 §5.1)',
  }),
  expires_in: Type.Integer({ examples: [3600] }),
  scope: Type.String({ examples: ['connector:write connector:read'] }),
});

/**
 * `POST /platform/v1/auth/token/client-credentials` in its own plugin scope: only form bodies are parsed there
 * (our parser, which detects repeated parameters), every error is answered in the OAuth format, and every answer
 * carries `Cache-Control: no-store` and `Pragma: no-cache` (RFC 6749 §5.1).
 */
/** What the OAuth surface uses (oauth.routes.ts), handed over by the composition root (app.ts). */
export interface OAuthRouteDeps {
  oauth: OAuthServices;
  rateLimiter: RateLimiter;
  audit: AuditLog;
  config: Config;
  logger: Logger;
  metrics: Pick<Metrics, 'tokenGrants' | 'tokenRefusals'>;
  tracing: Pick<Tracing, 'inSpan' | 'enabled'>;
}

export async function registerTokenRoutes(app: App, ctx: OAuthRouteDeps): Promise<void> {
  const { clients, issuer, auditBatcher } = ctx.oauth;
  const endpoint = new TokenEndpoint(
    clients,
    issuer,
    ctx.rateLimiter,
    ctx.oauth.quotas,
    ctx.audit,
    auditBatcher,
    ctx.config,
    ctx.logger,
    ctx.oauth.dpop,
    ctx.oauth.clientKeys,
  );

  await app.register(async (scope: FastifyInstance) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      FORM,
      parseBodyText((_request, body, done) => {
        try {
          done(null, parseForm(body));
        } catch (err) {
          done(err as Error, undefined);
        }
      }, TOKEN_BODY_LIMIT),
    );
    const { tokenGrants, tokenRefusals } = ctx.metrics;
    const { tracing } = ctx;
    scope.setErrorHandler((error: FastifyError, request, reply) => {
      const oauthError = toOAuthError(error);
      tokenRefusals.labels(oauthError.error).inc();
      if (oauthError.status >= 500 && oauthError.status !== 503)
        request.log.error({ err: error }, 'token request failed');
      return sendOAuthError(reply, oauthError);
    });

    scope.post(
      TOKEN_PATH,
      {
        schema: {
          tags: ['oauth'],
          summary: 'Get an access token (OAuth 2.0 client credentials)',
          description:
            'RFC 6749 §4.4. Authenticate with HTTP Basic (client ID and secret) or, alternatively, client_id and client_secret body parameters, or a private_key_jwt assertion (RFC 7523). A DPoP header (RFC 9449) binds the token to the proof key (token_type DPoP). Errors follow RFC 6749 §5.2. Answers to an authenticated client carry RateLimit-Policy and RateLimit (its token quota); 429 carries Retry-After.',
          security: [{ clientBasic: [] }],
          consumes: [FORM],
          body: TokenForm,
          response: {
            200: TokenResponseBody,
            400: OAuthErrorBody,
            401: OAuthErrorBody,
            429: OAuthErrorBody,
            500: OAuthErrorBody,
            503: OAuthErrorBody,
          },
        },
      },
      async (request, reply) => {
        const form = request.body as FormParams | undefined;
        if (!form) throw invalidRequest(`The request body must be ${FORM}.`);
        const grant = {
          form,
          authorization: request.headers.authorization,
          ip: request.ip,
          dpop: { header: request.headers.dpop, method: 'POST', uri: `${ctx.config.publicUrl}${TOKEN_PATH}` },
        };
        // No span, and no closure for one, while no exporter is configured (the default).
        const granted = await (tracing.enabled
          ? tracing.inSpan('oauth.token_grant', {}, () => endpoint.handle(grant))
          : endpoint.handle(grant));
        tokenGrants.inc();
        reply.headers(granted.headers);
        // RFC 9449 §8.2: with nonces on, each answer hands out the current one, so clients rarely meet use_dpop_nonce.
        const nonce = ctx.oauth.dpop.nonces?.current();
        if (nonce) reply.header('dpop-nonce', nonce);
        return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(granted.response);
      },
    );

    registerRevocationRoutes(scope, ctx, endpoint);

    // RFC 9110 §15.5.6: other methods get 405 with Allow; the body stays in the endpoint's OAuth format. OPTIONS
    // is left to the edge (204 with Allow, src/http/edge.ts); HEAD comes with GET.
    scope.route({
      method: scope.supportedMethods.filter((m) => !['POST', 'OPTIONS', 'HEAD'].includes(m)),
      url: TOKEN_PATH,
      schema: { hide: true },
      config: { refusesMethod: true },
      handler: async (_request, reply) => {
        reply.header('allow', 'POST');
        return sendOAuthError(
          reply,
          new OAuthError('invalid_request', 'The token endpoint accepts POST only.', 405),
        );
      },
    });
  });
}

/**
 * Framework errors (content type, size, schema) and the edge's refusals (NUL or unpaired surrogates, malformed
 * percent-encoding: src/http/edge.ts) become `invalid_request`; anything unexpected `server_error`.
 */
function toOAuthError(error: FastifyError | Error): OAuthError {
  if (error instanceof OAuthError) return error;
  const unavailable = dependencyUnavailable(error);
  if (unavailable) return temporarilyUnavailable(unavailable.code, RETRY_AFTER_SECONDS);
  if (error instanceof AppError && error.status < 500) {
    if (error.code === 'validation_failed')
      return invalidRequest('The request contains a NUL character or an unpaired surrogate.');
    if (error.code === 'malformed_url')
      return invalidRequest('The request contains a malformed percent-encoding.');
    if (error.code === 'payload_too_large') return invalidRequest('The request body is too large.');
    return invalidRequest('The request could not be processed.');
  }
  const fe = error as FastifyError;
  if (fe.validation || fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || fe.code === 'FST_ERR_CTP_EMPTY_TYPE') {
    return invalidRequest(`The request body must be ${FORM}.`);
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return invalidRequest('The request could not be processed.');
  }
  return new OAuthError('server_error', 'An internal error occurred.', 500);
}

export const REVOKE_PATH = '/platform/v1/auth/token/revoke';
export const INTROSPECT_PATH = '/platform/v1/auth/token/introspect';

const TokenParam = Type.Object(
  {
    token: Type.Optional(Type.String({ description: 'The access token.' })),
    token_type_hint: Type.Optional(Type.String({ examples: ['access_token'] })),
  },
  { additionalProperties: true },
);

const Introspection = Type.Object(
  {
    active: Type.Boolean(),
    scope: Type.Optional(Type.String()),
    client_id: Type.Optional(Type.String()),
    sub: Type.Optional(Type.String()),
    aud: Type.Optional(Type.String()),
    iss: Type.Optional(Type.String()),
    exp: Type.Optional(Type.Integer()),
    iat: Type.Optional(Type.Integer()),
    jti: Type.Optional(Type.String()),
    token_type: Type.Optional(Type.String()),
    company_id: Type.Optional(Type.String()),
    cnf: Type.Optional(Type.Object({ jkt: Type.String() }, { description: 'RFC 9449 §6.2' })),
  },
  {
    description: 'RFC 7662 §2.2; only `active` when the token is not active or not of the caller’s company.',
  },
);

/**
 * Token revocation (RFC 7009) and introspection (RFC 7662) for access tokens, inside the token endpoint's plugin
 * scope (form bodies, OAuth error format, `Cache-Control: no-store`). Both authenticate the calling client exactly
 * as the token endpoint does (RFC 7009 §2.1, RFC 7662 §2.1), and reach only tokens of the client's own company:
 * another company's token is answered as if it did not exist (`{"active":false}`; revocation 200 without effect,
 * as §2.2 answers for an invalid token), so neither endpoint tells one company about another's tokens.
 */
export function registerRevocationRoutes(
  scope: FastifyInstance,
  ctx: OAuthRouteDeps,
  endpoint: TokenEndpoint,
): void {
  const { verifier, revocations } = ctx.oauth;
  const common = {
    tags: ['oauth'],
    security: [{ clientBasic: [] }],
    consumes: [FORM],
    body: TokenParam,
  };

  const tokenOf = (form: FormParams): string => {
    if (form.token === undefined || form.token === '')
      throw invalidRequest('The token parameter is required.');
    return form.token;
  };

  /** Both endpoints authenticate the client as the token endpoint does, then read the token's claims if it is active. */
  const clientAndClaims = async (request: FastifyRequest) => {
    const form = (request.body as FormParams | undefined) ?? invalidBody();
    const token = tokenOf(form);
    const client = await endpoint.authenticateClient({
      form,
      authorization: request.headers.authorization,
      ip: request.ip,
    });
    return { client, claims: await verifier.activeClaims(token) };
  };

  scope.post(
    REVOKE_PATH,
    {
      schema: {
        ...common,
        summary: 'Revoke an access token (RFC 7009)',
        description:
          'Client authentication as at the token endpoint. 200 whether or not the token was active (§2.2); a revoked token is refused (401 invalid_token) on every node within 1 s.',
        response: { 200: Type.Null(), 400: OAuthErrorBody, 401: OAuthErrorBody, 429: OAuthErrorBody },
      },
    },
    async (request, reply) => {
      const { client, claims } = await clientAndClaims(request);
      if (claims && claims.company_id === client.companyId) {
        await revocations.revoke({
          jti: claims.jti,
          exp: claims.exp,
          companyId: claims.company_id,
          clientId: claims.client_id,
        });
        await ctx.audit.record({
          type: 'token.revoked',
          companyId: client.companyId,
          actor: `client:${client.clientId}`,
          subject: claims.client_id,
          ip: request.ip,
          details: { jti: claims.jti, client_id: claims.client_id },
        });
      }
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').status(200).send();
    },
  );

  scope.post(
    INTROSPECT_PATH,
    {
      schema: {
        ...common,
        summary: 'Introspect an access token (RFC 7662)',
        description:
          'Client authentication as at the token endpoint. A token that is expired, revoked, not ours, or of another company is {"active":false}.',
        response: { 200: Introspection, 400: OAuthErrorBody, 401: OAuthErrorBody, 429: OAuthErrorBody },
      },
    },
    async (request, reply) => {
      const { client, claims } = await clientAndClaims(request);
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      if (!claims || claims.company_id !== client.companyId) return { active: false };
      return {
        active: true,
        scope: claims.scope,
        client_id: claims.client_id,
        sub: claims.sub,
        aud: claims.aud,
        iss: claims.iss,
        exp: claims.exp,
        iat: claims.iat,
        jti: claims.jti,
        // RFC 9449 §6.2: a DPoP-bound token introspects as such, with the key it is bound to.
        token_type: claims.cnf ? 'DPoP' : 'Bearer',
        company_id: claims.company_id,
        ...(claims.cnf ? { cnf: { jkt: claims.cnf.jkt } } : {}),
      };
    },
  );
}

function invalidBody(): never {
  throw invalidRequest(`The request body must be ${FORM}.`);
}
