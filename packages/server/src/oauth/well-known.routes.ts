import { type Static, Type } from '@sinclair/typebox';
import type { Config } from '../config/schema.ts';
import type { App } from '../http/types.ts';
import { ASSERTION_ALGS } from './client-assertion.ts';
import { CLIENT_AUTH_METHODS } from './client-auth.ts';
import { DPOP_ALGS } from './dpop-proof.ts';
import { SCOPES } from './principal.ts';
import { JWKS_MAX_AGE_SECONDS, type SigningKeyStore } from './signing-keys.ts';
import { INTROSPECT_PATH, REVOKE_PATH, TOKEN_PATH } from './token.routes.ts';

const Jwk = Type.Object(
  {
    kty: Type.String(),
    kid: Type.String(),
    use: Type.Literal('sig'),
    alg: Type.String(),
    crv: Type.Optional(Type.String()),
    x: Type.Optional(Type.String()),
    y: Type.Optional(Type.String()),
    n: Type.Optional(Type.String()),
    e: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const Jwks = Type.Object({ keys: Type.Array(Jwk) });

const Metadata = Type.Object({
  issuer: Type.String(),
  token_endpoint: Type.String(),
  jwks_uri: Type.String(),
  grant_types_supported: Type.Array(Type.String()),
  token_endpoint_auth_methods_supported: Type.Array(Type.String()),
  token_endpoint_auth_signing_alg_values_supported: Type.Array(Type.String()),
  revocation_endpoint: Type.String(),
  revocation_endpoint_auth_methods_supported: Type.Array(Type.String()),
  revocation_endpoint_auth_signing_alg_values_supported: Type.Array(Type.String()),
  introspection_endpoint: Type.String(),
  introspection_endpoint_auth_methods_supported: Type.Array(Type.String()),
  introspection_endpoint_auth_signing_alg_values_supported: Type.Array(Type.String()),
  dpop_signing_alg_values_supported: Type.Array(Type.String()),
  scopes_supported: Type.Array(Type.String()),
  response_types_supported: Type.Array(Type.String()),
  service_documentation: Type.String(),
});

/**
 * Discovery: the JWK Set (RFC 7517 §5) of every published signing key, and RFC 8414 authorization-server
 * metadata. Both are public and cacheable; the JWKS max-age is part of KEY_RETENTION_SECONDS.
 */
export function registerWellKnownRoutes(
  app: App,
  keys: SigningKeyStore,
  // The config itself, read per request: the test server learns its port (publicUrl) after the app is built.
  config: Pick<Config, 'publicUrl'>,
): void {
  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        tags: ['oauth'],
        summary: 'Public keys that verify access tokens (RFC 7517)',
        response: { 200: Jwks },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', `public, max-age=${JWKS_MAX_AGE_SECONDS}`);
      return keys.jwks() as Static<typeof Jwks>;
    },
  );

  app.get(
    '/.well-known/oauth-authorization-server',
    {
      schema: {
        tags: ['oauth'],
        summary: 'Authorization server metadata (RFC 8414)',
        response: { 200: Metadata },
      },
    },
    async (_request, reply) => {
      const base = config.publicUrl;
      reply.header('cache-control', `public, max-age=${JWKS_MAX_AGE_SECONDS}`);
      return {
        // RFC 8414 §3.3: must equal the `iss` of the tokens we mint.
        issuer: base,
        token_endpoint: `${base}${TOKEN_PATH}`,
        jwks_uri: `${base}/.well-known/jwks.json`,
        // The default is authorization_code + implicit (§2), so say it.
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
        // §2: the algorithms accepted for private_key_jwt assertions (RFC 7523).
        token_endpoint_auth_signing_alg_values_supported: [...ASSERTION_ALGS],
        // RFC 7009 and RFC 7662 endpoints authenticate clients exactly as the token endpoint does.
        revocation_endpoint: `${base}${REVOKE_PATH}`,
        revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
        revocation_endpoint_auth_signing_alg_values_supported: [...ASSERTION_ALGS],
        introspection_endpoint: `${base}${INTROSPECT_PATH}`,
        introspection_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
        introspection_endpoint_auth_signing_alg_values_supported: [...ASSERTION_ALGS],
        // RFC 9449 §5.1: the algorithms accepted for DPoP proofs.
        dpop_signing_alg_values_supported: [...DPOP_ALGS],
        scopes_supported: [...SCOPES],
        // REQUIRED by §2; a client-credentials-only server has no authorization endpoint, hence none.
        response_types_supported: [],
        service_documentation: `${base}/docs`,
      };
    },
  );
}
