import type { AppContext } from '@parley/server/internal/context';
import type { Scope } from '@parley/server/internal/oauth/principal';
import { TOKEN_PATH } from '@parley/server/internal/oauth/token.routes';
import { type HttpResult, http } from '../http-client.ts';

export interface TestClient {
  companyId: string;
  clientId: string;
  secret: string;
  scopes: Scope[];
}

/** A new company with one API client, created through the service (what the CLI does). */
export async function createTestClient(
  ctx: AppContext,
  scopes: Scope[] = ['connector:write', 'connector:read'],
  companyId?: string,
): Promise<TestClient> {
  const company =
    companyId ?? (await ctx.companies.create(`Company ${Math.random().toString(36).slice(2, 8)}`)).id;
  const { client, secret } = await ctx.oauth.clients.create({
    companyId: company,
    name: 'Test client',
    scopes,
  });
  return { companyId: company, clientId: client.clientId, secret, scopes };
}

export const basicAuth = (id: string, secret: string): string =>
  `Basic ${Buffer.from(`${id}:${secret}`, 'utf8').toString('base64')}`;

export const FORM = 'application/x-www-form-urlencoded';

/** POSTs a raw body to the token endpoint. */
export function postToken(
  server: { baseUrl: string },
  body: string | undefined,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  return http(`${server.baseUrl}${TOKEN_PATH}`, {
    method: 'POST',
    headers: body === undefined ? headers : { 'content-type': FORM, ...headers },
    body,
  });
}

/** A token for the client via Basic auth; fails the test unless the endpoint answers 200. */
export async function fetchToken(
  server: { baseUrl: string },
  client: TestClient,
  scope?: string,
): Promise<string> {
  const body = `grant_type=client_credentials${scope ? `&scope=${encodeURIComponent(scope)}` : ''}`;
  const result = await postToken(server, body, { authorization: basicAuth(client.clientId, client.secret) });
  if (result.status !== 200) throw new Error(`token request failed: ${result.status} ${result.text}`);
  return result.body.access_token;
}

/** A new company with an API client holding `scopes`, a token from the real token endpoint, and its bearer header. */
export async function createBearerTenant(
  server: { baseUrl: string; ctx: AppContext },
  scopes: Scope[],
): Promise<{ client: TestClient; companyId: string; token: string; auth: Record<string, string> }> {
  const client = await createTestClient(server.ctx, scopes);
  const token = await fetchToken(server, client);
  return { client, companyId: client.companyId, token, auth: { authorization: `Bearer ${token}` } };
}

export const bearer = (token: string): RequestInit => ({ headers: { authorization: `Bearer ${token}` } });

/** Payload of a compact JWS, unverified (tests inspect what they were issued). */
export const claimsOf = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
export const headerOf = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8'));
