import { buildApp } from './app.ts';
import { loadConfig } from './config/load.ts';
import { createContext } from './context.ts';
import { createLogger } from './logging/logger.ts';

/** Starts the server: config → context → app → listen, and a graceful shutdown on SIGTERM/SIGINT. */
export async function startServer(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const ctx = await createContext(config, logger);
  const { app, readiness } = await buildApp(ctx);
  app.addHook('onClose', async () => ctx.close());

  await app.listen({ port: config.port, host: config.host });
  logger.info(
    { publicUrl: config.publicUrl, store: ctx.store.describe, broker: config.redisUrl ? 'redis' : 'memory' },
    'parley is serving',
  );

  let stopping = false;
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
    app.close().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}
