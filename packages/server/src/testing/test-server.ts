import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import { buildApp } from '../app.ts';
import { loadConfig } from '../config/load.ts';
import type { Config } from '../config/schema.ts';
import { type AppContext, createContext } from '../context.ts';
import type { App } from '../http/types.ts';
import { createLogger } from '../logging/logger.ts';
import { type TestDatabase, testPostgresUrl, testRedisUrl, uniqueSchema } from './databases.ts';

export interface TestServer {
  baseUrl: string;
  ctx: AppContext;
  app: App;
  config: Config;
  /** Every log line the server wrote (JSON text), for assertions such as "no secret was ever logged". */
  logs: string[];
  dataDir: string;
  close(): Promise<void>;
}

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

export interface TestServerOptions {
  database?: TestDatabase;
  /** Use Redis (PARLEY_TEST_REDIS_URL) for the broker and shared state. */
  redis?: boolean;
  config?: DeepPartial<Config>;
  /** Share the data folder / PostgreSQL schema of an earlier server (a second node, or a restart). */
  shareWith?: TestServer;
}

/**
 * Starts a real Parley server on 127.0.0.1 with an ephemeral port, its own data folder and (for PostgreSQL) its
 * own schema. Tests talk to it over HTTP like any client.
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.shareWith?.dataDir ?? mkdtempSync(join(tmpdir(), 'parley-test-'));
  const database = options.database ?? 'sqlite';
  const schema = options.shareWith
    ? schemaOf(options.shareWith)
    : database === 'postgres'
      ? uniqueSchema()
      : undefined;
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const config = loadConfig(
    {},
    {
      port: 0,
      host: '127.0.0.1',
      dataDir,
      logLevel: 'info',
      ...(database === 'postgres' ? { databaseUrl: testPostgresUrl() } : {}),
      ...(options.redis ? { redisUrl: testRedisUrl() } : {}),
      ...(options.config as Partial<Config>),
    },
  );
  const logger = createLogger(config.logLevel, sink);
  const ctx = await createContext(config, logger, { schema });
  const { app } = await buildApp(ctx);
  app.addHook('onClose', async () => ctx.close());
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('server did not bind a TCP port');
  const baseUrl = `http://127.0.0.1:${address.port}`;
  // The issuer must be the URL clients really use; tests learn the port only after listen.
  if (!options.config?.publicUrl) {
    (config as { publicUrl: string }).publicUrl = baseUrl;
    if (!options.config?.oauth?.audience) (config.oauth as { audience: string }).audience = baseUrl;
  }

  const server: TestServer = {
    baseUrl,
    ctx,
    app,
    config,
    logs,
    dataDir,
    close: async () => {
      await app.close();
      if (!options.shareWith) {
        rmSync(dataDir, { recursive: true, force: true });
        if (schema) await dropSchema(schema);
      }
    },
  };
  schemas.set(server, schema);
  return server;
}

const schemas = new WeakMap<TestServer, string | undefined>();
const schemaOf = (server: TestServer) => schemas.get(server);

async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: testPostgresUrl() });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}
