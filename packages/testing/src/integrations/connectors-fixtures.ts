import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type HttpResult, http } from '../http-client.ts';
import { createBearerTenant, type TestClient } from '../oauth/oauth-fixtures.ts';
import type { TestServer } from '../test-server.ts';

export interface RecordedCall {
  method: string;
  path: string;
  authorization: string | undefined;
  body: string;
}

/**
 * A real HTTP server on 127.0.0.1 standing in for an integration: it records the Authorization header of every
 * call. Paths choose the answer: `/status/<code>`, `/hang` (never answers), `/redirect?to=<url>&status=<3xx>`
 * (`&close=1`: and close the connection, so the next hop needs a new one),
 * `/ndjson` (three chunks, 20 ms apart); anything else answers 200 JSON.
 */
export interface KeyRecorder {
  url: string;
  calls: RecordedCall[];
  authorizations(): Array<string | undefined>;
  close(): Promise<void>;
}

export async function startKeyRecorder(): Promise<KeyRecorder> {
  const calls: RecordedCall[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    calls.push({
      method: req.method ?? '',
      path: req.url ?? '',
      authorization: req.headers.authorization,
      body: Buffer.concat(chunks).toString('utf8'),
    });
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    authorizations: () => calls.map((c) => c.authorization),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function answer(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://recorder');
  const status = /^\/status\/(\d{3})$/.exec(url.pathname);
  if (status) {
    res.writeHead(Number(status[1]), { 'content-type': 'application/json' }).end('{"status":"as asked"}');
  } else if (url.pathname === '/hang') {
    // Never answers: the caller's timeout must end the call.
  } else if (url.pathname === '/redirect') {
    res
      .writeHead(Number(url.searchParams.get('status') ?? 302), {
        location: url.searchParams.get('to') ?? '/',
        ...(url.searchParams.has('close') ? { connection: 'close' } : {}),
      })
      .end();
  } else if (url.pathname === '/ndjson') {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    let n = 0;
    const timer = setInterval(() => {
      res.write(`{"delta":"part${++n}"}\n`);
      if (n === 3) {
        clearInterval(timer);
        res.end();
      }
    }, 20);
  } else if (url.pathname.endsWith('/models')) {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end('{"object":"list","data":[{"id":"m1","object":"model","created":0,"owned_by":"test"}]}');
  } else {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  }
}

/** A distinctive key, easy to find in any byte dump (and never a substring of another test key). */
export const testKey = (label = 'k'): string => `sk-test-${label}-${randomBytes(12).toString('hex')}`;

/** A connector of `companyId` (a webhook unless `type` says otherwise) created through the service, as the CLI does. */
export function createConnector(
  server: TestServer,
  companyId: string,
  connector: { name: string; url: string; apiKey?: string; type?: 'webhook' | 'openai' },
) {
  return server.ctx.connectors.create({ companyId, type: 'webhook', ...connector }, { actor: 'cli' });
}

/** A company with an API client holding both connector scopes, and a token from the real token endpoint. */
export interface Tenant {
  client: TestClient;
  companyId: string;
  token: string;
  auth: Record<string, string>;
}

export async function createTenant(server: TestServer): Promise<Tenant> {
  return createBearerTenant(server, ['connector:write', 'connector:read']);
}

export function putKey(
  server: TestServer,
  auth: Record<string, string>,
  connectorId: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  return http(`${server.baseUrl}/integrations/v1/connectors/api-keys/${connectorId}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...auth, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export function checkConnector(
  server: TestServer,
  auth: Record<string, string>,
  connectorId: string,
): Promise<HttpResult> {
  return http(`${server.baseUrl}/integrations/v1/connectors/${connectorId}/check`, {
    method: 'POST',
    headers: auth,
  });
}

export function listConnectors(server: TestServer, auth: Record<string, string>): Promise<HttpResult> {
  return http(`${server.baseUrl}/integrations/v1/connectors`, { headers: auth });
}
