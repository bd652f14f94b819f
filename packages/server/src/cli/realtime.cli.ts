import { type Command, requireString } from '../cli-kit/command.ts';

/**
 * `parley realtime --config FILE`: only the realtime engine, configured from a Centrifugo v6 JSON config file, so
 * people who run Centrifugo today can point their clients and config at Parley. Unknown keys are logged as warnings;
 * `prometheus.enabled` serves `/metrics` with Centrifugo's metric names (metrics/standalone-metrics.ts).
 */
export const realtimeCommand: Command<undefined, undefined> = {
  name: 'realtime',
  summary: 'run only the realtime engine from a Centrifugo v6 JSON config file',
  options: {
    config: { description: 'path to the Centrifugo JSON config', required: true },
    port: { description: 'listen on this port instead of http_server.port' },
  },
  needsContext: false,
  async run(options) {
    // The engine loads when this command runs, not when `parley` starts for another command.
    const { closeOnSignals, runStandalone } = await import('@parley/realtime');
    const { standaloneMetrics } = await import('../metrics/standalone-metrics.ts');
    const port = options.port === undefined ? undefined : Number(options.port);
    const overrides = { metrics: standaloneMetrics(), ...(port === undefined ? {} : { port }) };
    closeOnSignals(await runStandalone(requireString(options, 'config'), overrides));
    return undefined;
  },
};
