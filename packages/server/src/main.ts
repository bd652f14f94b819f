import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { buildApp } from './app.ts';
import { runPrimary } from './cluster/primary.ts';
import { loadConfig } from './config/load.ts';
import type { Config } from './config/schema.ts';
import { createContext } from './context.ts';
import { createLogger } from './logging/logger.ts';
import { RecentErrors } from './system/recent-errors.ts';

/** Of the shutdown grace, what is kept back for closing connections and the store after replies drained. */
const CLOSE_MARGIN_MS = 3_000;

/**
 * Starts the server: with PARLEY_WORKERS above 1 as the primary of that many worker processes (cluster/primary.ts),
 * each of which — or this process alone — starts a node.
 */
export async function startServer(): Promise<void> {
  const config = loadConfig();
  const recentErrors = new RecentErrors();
  const logger = createLogger(config.logLevel, undefined, config.logFormat, (line) =>
    recentErrors.recordLine(line),
  );
  if (config.workers > 1 && cluster.isPrimary) return runPrimary({ config, logger });
  const nodeLogger = cluster.isWorker ? logger.child({ worker: cluster.worker?.id }) : logger;
  await startNode(config, nodeLogger, recentErrors);
}

/** One node: config → context → app → listen, and a graceful drain on SIGTERM/SIGINT. */
async function startNode(config: Config, logger: Logger, recentErrors: RecentErrors): Promise<void> {
  const ctx = await createContext(config, logger, { recentErrors });
  const { app, readiness, drain, start } = await buildApp(ctx);
  app.addHook('onClose', async () => ctx.close());
  await start();

  await app.listen({ port: config.port, host: config.host });
  logger.info(
    {
      publicUrl: config.publicUrl,
      store: ctx.store.describe,
      broker: config.redisUrl ? 'redis' : 'memory',
      pid: process.pid,
    },
    'parley is serving',
  );

  let stopping = false;
  /**
   * Drain, then close: `/readyz` turns 503 and no new connection is accepted (requests on open connections are
   * still served); realtime clients are told to reconnect (to another node) while this node's streaming replies
   * finish and its reply line is handed over; then Fastify closes and the store last.
   */
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    readiness.shuttingDown = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('graceful shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownGraceMs);
    force.unref();
    app.server.close();
    drain(Math.max(0, config.shutdownGraceMs - CLOSE_MARGIN_MS))
      .then(() => app.close())
      .then(
        () => process.exit(0),
        (err) => {
          logger.error({ err }, 'error during shutdown');
          process.exit(1);
        },
      );
  };
  // A rejection nobody awaited is a bug to fix, not a reason to drop every visitor's connection: say it loudly.
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}
