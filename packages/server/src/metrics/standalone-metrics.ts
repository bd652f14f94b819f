import type { RealtimeObserver, StandaloneMetrics } from '@parley/realtime';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { PROCESS_PREFIX } from './metrics.ts';
import { CENTRIFUGO_NAMES, PARLEY_REALTIME_NAMES, registerRealtimeMetrics } from './realtime-metrics.ts';

/**
 * Metrics of `parley realtime` (the stand-alone Centrifugo mode), served on its port at `/metrics` when the config
 * sets `prometheus.enabled` as Centrifugo does: the engine's figures under Centrifugo's own names (so Centrifugo
 * dashboards and alerts keep working) and under Parley's, plus the process figures.
 *
 * Built on first use. The command hands this over before the config file is read, and with `prometheus.enabled`
 * off the engine never touches it (packages/realtime/src/standalone/run.ts): the process collectors — an
 * event-loop-delay monitor sampling every few milliseconds, a GC observer — then never start.
 */
export function standaloneMetrics(): StandaloneMetrics {
  let built: StandaloneMetrics | undefined;
  return {
    get observer() {
      built ??= buildStandaloneMetrics();
      return built.observer;
    },
    watch: (engine) => {
      built ??= buildStandaloneMetrics();
      built.watch(engine);
    },
    serve: (request, response) => {
      built ??= buildStandaloneMetrics();
      built.serve(request, response);
    },
  };
}

function buildStandaloneMetrics(): StandaloneMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: PROCESS_PREFIX });
  const families = [
    registerRealtimeMetrics(registry, CENTRIFUGO_NAMES),
    registerRealtimeMetrics(registry, PARLEY_REALTIME_NAMES),
  ];
  const observer: RealtimeObserver = {
    commandReceived: (method, transport) => {
      for (const f of families) f.observer.commandReceived(method, transport);
    },
    commandHandled: (method, seconds, errorCode) => {
      for (const f of families) f.observer.commandHandled(method, seconds, errorCode);
    },
    framesSent: (type, transport, count) => {
      for (const f of families) f.observer.framesSent(type, transport, count);
    },
  };
  return {
    observer,
    watch: (engine) => {
      for (const f of families) f.watch(engine);
    },
    serve: (_request, response) => {
      registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
        () => response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n'),
      );
    },
  };
}
