import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { buildApp } from '@parley/server/internal/app';
import { loadConfig } from '@parley/server/internal/config/load';
import type { Config } from '@parley/server/internal/config/schema';
import { type AppContext, createContext } from '@parley/server/internal/context';
import type { RouteEntry } from '@parley/server/internal/http/route-methods';
import type { App } from '@parley/server/internal/http/types';
import { createLogger } from '@parley/server/internal/logging/logger';
import { RecentErrors } from '@parley/server/internal/system/recent-errors';
import {
  dropTestSchema,
  type TestDatabase,
  testPostgresUrl,
  testRedisUrl,
  uniqueSchema,
} from './databases.ts';

export interface TestServer {
  baseUrl: string;
  ctx: AppContext;
  app: App;
  config: Config;
  /** Every log line the server wrote (JSON text), for assertions such as "no secret was ever logged". */
  logs: string[];
  dataDir: string;
  /** PostgreSQL only: the schema this server (and any server sharing with it) uses. */
  schema: string | undefined;
  /** What SIGTERM starts (main.ts): the graceful drain, before `close`. */
  drain(graceMs: number): Promise<void>;
  /** Every registered route and method (packages/server/src/http/route-methods.ts). */
  routes(): RouteEntry[];
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
  /**
   * Leave the public URL as `npm start` does without PARLEY_PUBLIC_URL, `http://localhost:{port}`, while the tests
   * still reach the server at `baseUrl` (127.0.0.1): what a new user who opens http://127.0.0.1:8080 meets.
   */
  defaultPublicUrl?: boolean;
  /**
   * The clock of session expiry, in-memory rate limits and scheduled jobs (see ContextOptions.clock), e.g. a
   * TestClock's `now`.
   */
  clock?: () => number;
  /**
   * Runs between building and starting, as main.ts orders them: adds routes or hooks to the built app, or looks at
   * the services before any background work has started.
   */
  beforeStart?: (app: App, ctx: AppContext) => Promise<void> | void;
}

/**
 * Starts a real Parley server on 127.0.0.1 with an ephemeral port, its own data folder and (for PostgreSQL) its
 * own schema. Tests talk to it over HTTP like any client.
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.shareWith?.dataDir ?? mkdtempSync(join(tmpdir(), 'parley-test-'));
  const database = options.database ?? 'sqlite';
  const schema = options.shareWith
    ? options.shareWith.schema
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
  // As main.ts wires it: warnings and errors also reach the portal's system view.
  const recentErrors = new RecentErrors();
  const logger = createLogger(config.logLevel, sink, 'json', (line) => recentErrors.recordLine(line));
  const ctx = await createContext(config, logger, { schema, recentErrors, clock: options.clock });
  let built: Awaited<ReturnType<typeof buildApp>> | undefined;
  let address: ReturnType<App['server']['address']>;
  try {
    built = await buildApp(ctx);
    built.app.addHook('onClose', async () => ctx.close());
    await options.beforeStart?.(built.app, ctx);
    await built.start();
    await built.app.listen({ port: 0, host: '127.0.0.1' });
    address = built.app.server.address();
    if (!address || typeof address === 'string') throw new Error('server did not bind a TCP port');
  } catch (error) {
    // Half a server (its context's workers and pools) would keep the test file's process alive after the failure.
    await (built ? built.app.close() : ctx.close()).catch(() => {});
    if (!options.shareWith) rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const { app, drain, routes } = built;
  const baseUrl = `http://127.0.0.1:${address.port}`;
  // The issuer must be the URL clients really use; tests learn the port only after listen.
  if (!options.config?.publicUrl) {
    const publicUrl = options.defaultPublicUrl ? `http://localhost:${address.port}` : baseUrl;
    (config as { publicUrl: string }).publicUrl = publicUrl;
    if (!options.config?.oauth?.audience) (config.oauth as { audience: string }).audience = publicUrl;
  }

  const server: TestServer = {
    baseUrl,
    ctx,
    app,
    config,
    logs,
    dataDir,
    schema,
    drain,
    routes,
    close: async () => {
      await app.close();
      if (!options.shareWith) {
        rmSync(dataDir, { recursive: true, force: true });
        if (schema) await dropTestSchema(schema);
      }
    },
  };
  return server;
}
