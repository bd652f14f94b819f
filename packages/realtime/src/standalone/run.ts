import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemoryBroker, MemoryPresenceManager } from '../broker/memory.ts';
import { RedisBroker, RedisPresenceManager } from '../broker/redis.ts';
import { RealtimeEngine } from '../engine/engine.ts';
import { createJsonLogger, type Logger, silentLogger } from '../engine/logger.ts';
import type { RealtimeObserver } from '../engine/observer.ts';
import { loadCentrifugoConfig, type StandaloneSettings } from './config.ts';

export interface StandaloneServer {
  engine: RealtimeEngine;
  server: Server;
  settings: StandaloneSettings;
  /** Base URL the server listens on, e.g. `http://127.0.0.1:8000`. */
  url: string;
  /** Graceful shutdown (clients get 3001 and reconnect elsewhere). */
  close(): Promise<void>;
}

/**
 * Prometheus metrics for the stand-alone server, provided by the host (the engine depends on no metrics library):
 * `observer` is installed in the engine, `watch` receives the engine once built, and `serve` answers `GET /metrics`
 * when the config enables `prometheus`.
 */
export interface StandaloneMetrics {
  observer: RealtimeObserver;
  watch(engine: RealtimeEngine): void;
  serve(request: IncomingMessage, response: ServerResponse): void;
}

export interface StandaloneOverrides {
  /** Listen on this port instead of `http_server.port` (0 = any free port). */
  port?: number;
  address?: string;
  logger?: Logger;
  metrics?: StandaloneMetrics;
}

function loggerFor(level: StandaloneSettings['logLevel']): Logger {
  if (level === 'none') return silentLogger;
  return createJsonLogger(level, (line) => process.stdout.write(line));
}

/**
 * Runs the engine as a stand-alone Centrifugo replacement from a Centrifugo v6 JSON config file: WebSocket on
 * `/connection/websocket`, HTTP-streaming and SSE with `/emulation` when enabled, server API on `/api`, `GET /health`,
 * all on `http_server.port` (default 8000). Every key of the file it does not implement is logged at start, one line
 * each.
 */
export async function runStandalone(
  configPath: string | { config: string | Record<string, unknown> },
  overrides: StandaloneOverrides = {},
): Promise<StandaloneServer> {
  const text = typeof configPath === 'string' ? await readFile(configPath, 'utf8') : configPath.config;
  const settings = loadCentrifugoConfig(text);
  const logger = overrides.logger ?? loggerFor(settings.logLevel);
  for (const key of settings.unknownKeys) {
    logger.warn({ key }, 'unknown or unsupported configuration key ignored');
  }
  for (const warning of settings.warnings) logger.warn({}, warning);
  const metrics = settings.prometheus ? overrides.metrics : undefined;
  if (settings.prometheus && metrics === undefined) {
    logger.warn({ key: 'prometheus.enabled' }, 'no metrics provider in this host; /metrics is not served');
  }
  const { engine: engineSettings } = settings;
  const prefix = engineSettings.redisPrefix ?? 'centrifugo';
  const broker =
    engineSettings.type === 'redis'
      ? new RedisBroker({ url: engineSettings.redisUrl!, prefix })
      : new MemoryBroker();
  const presenceManager =
    engineSettings.type === 'redis'
      ? new RedisPresenceManager({ url: engineSettings.redisUrl!, prefix })
      : new MemoryPresenceManager({ hub: (broker as MemoryBroker).hub });
  const engine = new RealtimeEngine({
    ...settings.options,
    broker,
    presenceManager,
    closeBroker: true,
    logger,
    ...(metrics ? { observer: metrics.observer } : {}),
  });
  metrics?.watch(engine);
  await engine.start();
  const { healthPath } = settings;
  const server = createServer((request, response) => {
    const handle = async () =>
      (await engine.httpHandler(request, response)) || (await engine.apiHandler(request, response));
    handle().then(
      (handled) => {
        if (handled) return;
        if (metrics !== undefined && request.method === 'GET' && request.url?.split('?')[0] === '/metrics') {
          metrics.serve(request, response);
          return;
        }
        if (healthPath !== undefined && request.url?.split('?')[0] === healthPath) {
          response.writeHead(200, { 'Content-Type': 'application/json' });
          response.end('{}');
          return;
        }
        response.writeHead(404, { 'Content-Type': 'text/plain' });
        response.end('404 page not found\n');
      },
      (error: unknown) => {
        logger.error({ error: String(error) }, 'request failed');
        if (!response.headersSent) response.writeHead(500);
        response.end();
      },
    );
  });
  engine.attach(server);
  const port = overrides.port ?? settings.httpServer.port;
  const address = overrides.address ?? (settings.httpServer.address || '0.0.0.0');
  server.listen(port, address);
  await once(server, 'listening');
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${bound.port}`;
  logger.info({ url, engine: engineSettings.type }, 'realtime server listening');
  return {
    engine,
    server,
    settings,
    url,
    async close() {
      await engine.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Closes a stand-alone server gracefully on SIGINT/SIGTERM (clients get 3001 and reconnect elsewhere), then exits. */
export function closeOnSignals(running: StandaloneServer): void {
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
