import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { JWT_BEARER_ASSERTION } from '@parley/server/internal/oauth/client-assertion';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

/** A client's signing key: its public JWK (with `kid`) and a way to sign assertions with it. */
export interface ClientSigningKey {
  kid: string;
  publicJwk: JWK;
  assertion(claims: { clientId: string; audience: string; jti?: string }): Promise<string>;
}

export async function makeClientKey(kid: string): Promise<ClientSigningKey> {
  const pair = await generateKeyPair('ES256', { extractable: true });
  const publicJwk = { ...(await exportJWK(pair.publicKey)), kid, alg: 'ES256' };
  return { kid, publicJwk, assertion: (claims) => sign(pair.privateKey, kid, claims) };
}

function sign(key: PrivateKey, kid: string, claims: { clientId: string; audience: string; jti?: string }) {
  return new SignJWT({ jti: claims.jti ?? crypto.randomUUID() })
    .setProtectedHeader({ alg: 'ES256', kid })
    .setIssuer(claims.clientId)
    .setSubject(claims.clientId)
    .setAudience(claims.audience)
    .setIssuedAt()
    .setExpirationTime('2m')
    .sign(key);
}

/** The token request body of a private_key_jwt client. */
export const assertionGrant = (assertion: string): string =>
  `grant_type=client_credentials&client_assertion_type=${encodeURIComponent(JWT_BEARER_ASSERTION)}&client_assertion=${assertion}`;

/**
 * A client's JWKS endpoint on 127.0.0.1 (never anywhere else): serves whatever `publish` set last, or the status
 * `fail` asks for, and counts the requests it answered so tests can see when the server fetched.
 */
export interface JwksServer {
  url: string;
  requests: number;
  publish(keys: JWK[]): void;
  fail(status: number | undefined): void;
  close(): Promise<void>;
}

export async function startJwksServer(): Promise<JwksServer> {
  let body = JSON.stringify({ keys: [] });
  let failing: number | undefined;
  const state = { requests: 0 };
  const server: Server = createServer((_req, res) => {
    state.requests++;
    if (failing !== undefined) {
      res.writeHead(failing).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/jwk-set+json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/jwks.json`,
    get requests() {
      return state.requests;
    },
    publish(keys) {
      body = JSON.stringify({ keys });
    },
    fail(status) {
      failing = status;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
