import { UsersService } from '@parley/server/internal/users/users.service';
import type { UserRole } from '@parley/server/internal/users/users.tables';
import type { TestDatabase } from '../databases.ts';
import type { HttpResult } from '../http-client.ts';
import { basicAuth, postToken } from '../oauth/oauth-fixtures.ts';
import { startTestServer, type TestServer, type TestServerOptions } from '../test-server.ts';
import { PortalTestClient } from './portal-test-client.ts';

export { PortalTestClient };

/** The password of every portal user the tests create. */
export const PASSWORD = 'correct horse battery';

/** Portal users by email, each with its role. */
export type PortalUsers = Record<string, UserRole>;

type ServerOptions = Omit<TestServerOptions, 'database'>;

/** Adds portal users to a company, all with {@link PASSWORD}, through the service the CLI uses. */
export async function createUsers(server: TestServer, companyId: string, users: PortalUsers): Promise<void> {
  const service = new UsersService(server.ctx.store.db);
  for (const [email, role] of Object.entries(users))
    await service.create({ companyId, email, password: PASSWORD, role });
}

/** A portal client signed in as this user (cookie and CSRF token kept, as the SPA keeps them). */
export async function signInClient(server: TestServer, email: string): Promise<PortalTestClient> {
  const client = new PortalTestClient(server.baseUrl);
  const res = await client.signIn(email, PASSWORD);
  if (res.status !== 200) throw new Error(`test setup: sign-in as ${email} answered ${res.status}`);
  return client;
}

/** A fresh server (own database schema / data folder) with one company, Acme, and these portal users. */
export async function startAcme(
  database: TestDatabase | undefined,
  users: PortalUsers,
  options: ServerOptions = {},
): Promise<{ server: TestServer; acmeId: string }> {
  const server = await startTestServer({ ...options, database });
  try {
    const acmeId = (await server.ctx.companies.create('Acme')).id;
    await createUsers(server, acmeId, users);
    return { server, acmeId };
  } catch (err) {
    await server.close();
    throw err;
  }
}

export interface PortalWorld {
  server: TestServer;
  acmeId: string;
  globexId: string;
  /** Signed in as admin@acme.test. */
  acme: PortalTestClient;
  /** Signed in as admin@globex.test: another tenant, which must never see Acme's data. */
  globex: PortalTestClient;
  /** Signed in as Acme's agent, who may use the inbox and nothing else. */
  agent: PortalTestClient;
}

export interface PortalWorldOptions extends ServerOptions {
  /** The email of Acme's agent (its local part is the name the inbox shows). */
  agentEmail?: string;
}

/**
 * The setup every portal API test shares: two companies (Acme and Globex, to show tenant isolation), an admin of
 * each and an agent of Acme, all signed in.
 */
export async function startPortalWorld(
  database: TestDatabase,
  options: PortalWorldOptions = {},
): Promise<PortalWorld> {
  const { agentEmail = 'agent@acme.test', ...serverOptions } = options;
  const { server, acmeId } = await startAcme(
    database,
    { 'admin@acme.test': 'admin', [agentEmail]: 'agent' },
    serverOptions,
  );
  const globexId = (await server.ctx.companies.create('Globex')).id;
  await createUsers(server, globexId, { 'admin@globex.test': 'admin' });
  return {
    server,
    acmeId,
    globexId,
    acme: await signInClient(server, 'admin@acme.test'),
    globex: await signInClient(server, 'admin@globex.test'),
    agent: await signInClient(server, agentEmail),
  };
}

/** Asks the real token endpoint for a `connector:read` token with an API client's credentials (RFC 6749 §4.4). */
export const requestToken = (
  server: { baseUrl: string },
  clientId: string,
  secret: string,
): Promise<HttpResult> =>
  postToken(server, 'grant_type=client_credentials&scope=connector:read', {
    authorization: basicAuth(clientId, secret),
  });
