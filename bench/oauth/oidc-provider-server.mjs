// panva/oidc-provider v9 as the comparison point for bench/oauth/token.bench.ts: client credentials only, RFC 9068
// JWT access tokens (resource indicators with accessTokenFormat 'jwt'), ES256 like Parley, one hour like Parley,
// in-memory storage (its default adapter). Runs in its own process; prints "ready <port>" when listening.
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';

const port = Number(process.env.PORT);
const clientId = process.env.BENCH_CLIENT_ID;
const clientSecret = process.env.BENCH_CLIENT_SECRET;
const issuer = `http://127.0.0.1:${port}`;
const audience = 'urn:parley:bench';
const scope = 'connector:write connector:read';

const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
// oidc-provider insists on an RS256 key for ID tokens even when none are issued.
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope,
    },
  ],
  scopes: scope.split(' '),
  jwks: {
    keys: [
      { ...ec, kid: 'ec', alg: 'ES256', use: 'sig' },
      { ...rsa, kid: 'rsa', alg: 'RS256', use: 'sig' },
    ],
  },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => audience,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope,
        audience,
        accessTokenTTL: 3600,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
  ttl: { ClientCredentials: 3600 },
});
provider.proxy = false;

const server = provider.listen(port, '127.0.0.1', () => console.log(`ready ${port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
