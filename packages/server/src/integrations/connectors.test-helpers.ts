import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { runCli } from '../cli/main.ts';
import { createTestClient, fetchToken, type TestClient } from '../oauth/oauth.test-helpers.ts';
import { testPostgresUrl } from '../testing/databases.ts';
import { type HttpResult, http } from '../testing/http-client.ts';
import { PARLEY_BIN } from '../testing/process.ts';
import type { TestServer } from '../testing/test-server.ts';

export interface RecordedCall {
  method: string;
  path: string;
  authorization: string | undefined;
  body: string;
}

/**
 * A real HTTP server on 127.0.0.1 standing in for an integration: it records the Authorization header of every
 * call. Paths choose the answer: `/status/<code>`, `/hang` (never answers), `/redirect?to=<url>&status=<3xx>`,
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
export const newKey = (label = 'k'): string => `sk-test-${label}-${randomBytes(12).toString('hex')}`;

/** A company with an API client holding both connector scopes, and a token from the real token endpoint. */
export interface Tenant {
  client: TestClient;
  companyId: string;
  token: string;
  auth: Record<string, string>;
}

export async function createTenant(server: TestServer): Promise<Tenant> {
  const client = await createTestClient(server.ctx, ['connector:write', 'connector:read']);
  const token = await fetchToken(server, client);
  return { client, companyId: client.companyId, token, auth: { authorization: `Bearer ${token}` } };
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

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as the one JSON object `--json` prints. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read fields of whichever command ran.
  json: any;
}

/**
 * Runs the real CLI (`bin/parley.js`) as a child process against a test server's data: its data folder, and for
 * PostgreSQL its schema (through `options=-c search_path=…` in DATABASE_URL). `env` adds or overrides variables.
 */
export async function runParley(
  server: TestServer,
  args: string[],
  env: Record<string, string> = {},
): Promise<CliRun> {
  const base = await cliEnvFor(server);
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !/^(PARLEY_|DATABASE_URL|REDIS_URL|PORT|HOST)/.test(k) || k.startsWith('PARLEY_TEST_'),
    ),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PARLEY_BIN, ...args], {
      env: { ...inherited, ...base, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}

/**
 * The same CLI (`runCli`: argument parsing through `--json` output) run in this process with its own context on the
 * server's data — for cases where a separate process shows nothing more and would only cost seconds of start-up.
 */
export async function runParleyInProcess(
  server: TestServer,
  args: string[],
  env: Record<string, string> = {},
): Promise<CliRun> {
  const lines: string[] = [];
  const code = await runCli(args, (line) => lines.push(line), {
    env: { ...(await cliEnvFor(server)), ...env },
  });
  const stdout = lines.join('\n');
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr: '', json };
}

async function cliEnvFor(server: TestServer): Promise<Record<string, string>> {
  const env: Record<string, string> = { PARLEY_DATA_DIR: server.dataDir, LOG_LEVEL: 'warn' };
  if (server.ctx.store.dialect === 'postgres') {
    env.DATABASE_URL = `${testPostgresUrl()}?options=${encodeURIComponent(`-c search_path=${await currentSchema(server)}`)}`;
  }
  return env;
}

async function currentSchema(server: TestServer): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(
    server.ctx.store.db,
  );
  return rows[0]!.schema;
}
