#!/usr/bin/env node
/**
 * `node --import tsx packages/realtime/src/standalone/cli.ts config.json` — serve a Centrifugo v6 JSON config.
 * SIGINT/SIGTERM shut down gracefully (clients receive 3001 and reconnect).
 */
import { closeOnSignals, runStandalone } from './run.ts';

const configPath = process.argv[2];
if (!configPath) {
  process.stderr.write('usage: realtime-standalone <centrifugo-config.json>\n');
  process.exit(2);
}
closeOnSignals(await runStandalone(configPath));
