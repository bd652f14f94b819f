import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import type { Config } from '../config/schema.ts';
import { listenForScrapes } from '../metrics/metrics.routes.ts';

/**
 * `PARLEY_WORKERS=N`: the primary process of a node:cluster. It serves nothing itself; it forks N workers that
 * share the listening port (the primary hands out connections round-robin) and each run a full node —
 * `startNode` in main.ts — on the shared PostgreSQL and Redis, so to clients and to each other they are N nodes of
 * one cluster: the realtime broker, reply queue leases and rate limits already work across nodes.
 *
 * Why SQLite stays single-process: better-sqlite3 is synchronous and in-process, so N workers would be N writers of
 * one file taking turns on SQLite's single write lock (SQLITE_BUSY under load), and the in-memory broker and rate
 * limits would split into N unrelated halves. The config refuses more than one worker without PostgreSQL and Redis
 * (config/load.ts).
 *
 * A worker that dies is replaced at once; one that keeps dying soon after starting is restarted with growing
 * delays (up to MAX_RESTART_DELAY_MS) so a broken deployment does not spin. SIGTERM/SIGINT drain every worker (each
 * runs its own graceful drain) and the primary exits once they all have, or after the grace period.
 */
export interface PrimaryOptions {
  config: Config;
  logger: Logger;
}

/** A worker that lives shorter than this counts as crashing on start-up (its restart waits longer each time). */
const STABLE_AFTER_MS = 10_000;
const FIRST_RESTART_DELAY_MS = 250;
const MAX_RESTART_DELAY_MS = 30_000;
/** Beyond the workers' own grace: time for their exit to reach the primary. */
const EXIT_MARGIN_MS = 2_000;

export function runPrimary({ config, logger }: PrimaryOptions): void {
  const startedAt = new Map<number, number>();
  let quickDeaths = 0;
  let stopping = false;

  const fork = () => {
    const worker = cluster.fork();
    startedAt.set(worker.id, Date.now());
  };

  cluster.on('exit', (worker: Worker, code: number | null, signal: string | null) => {
    const lived = Date.now() - (startedAt.get(worker.id) ?? 0);
    startedAt.delete(worker.id);
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) {
        logger.info('every worker has stopped');
        process.exit(0);
      }
      return;
    }
    quickDeaths = lived < STABLE_AFTER_MS ? quickDeaths + 1 : 0;
    const delay =
      quickDeaths === 0 ? 0 : Math.min(MAX_RESTART_DELAY_MS, FIRST_RESTART_DELAY_MS * 2 ** (quickDeaths - 1));
    logger.error(
      { worker: worker.id, pid: worker.process.pid, code, signal, restartInMs: delay },
      'a worker stopped unexpectedly; starting another',
    );
    setTimeout(() => {
      if (!stopping) fork();
    }, delay).unref();
  });

  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    logger.info({ signal, workers: workers.length }, 'draining every worker');
    if (workers.length === 0) process.exit(0);
    // Each worker drains on its own SIGTERM (main.ts): stops taking work, hands its replies over, then exits.
    for (const worker of workers) worker.process.kill('SIGTERM');
    const force = setTimeout(() => {
      logger.error('workers did not stop within the shutdown grace; exiting');
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
      process.exit(1);
    }, config.shutdownGraceMs + EXIT_MARGIN_MS);
    force.unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  logger.info({ workers: config.workers, pid: process.pid }, 'starting workers');
  for (let i = 0; i < config.workers; i++) fork();
  if (config.metrics.port !== undefined) void serveClusterMetrics(config, logger);
}

/**
 * With PARLEY_METRICS_PORT the primary answers scrapes for the whole process group: prom-client's aggregator asks
 * every worker for its registry over the cluster's IPC channel and adds them up (counters and gauges summed), so
 * one scrape sees every worker — the workers themselves leave the port to it (metrics/metrics.routes.ts).
 */
async function serveClusterMetrics(config: Config, logger: Logger): Promise<void> {
  const aggregator = new AggregatorRegistry();
  try {
    await listenForScrapes(
      () => aggregator.clusterMetrics(),
      aggregator.contentType,
      config.metrics.port!,
      config.host,
    );
  } catch (err) {
    logger.error({ err, port: config.metrics.port }, 'the metrics port cannot be opened');
  }
}
