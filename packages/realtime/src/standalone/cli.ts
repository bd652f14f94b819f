#!/usr/bin/env node
/**
 * `node --import tsx packages/realtime/src/standalone/cli.ts config.json` — serve a Centrifugo v6 JSON config.
 * SIGINT/SIGTERM shut down gracefully (clients receive 3001 and reconnect).
 */
import { runStandalone } from './run.ts';

const configPath = process.argv[2];
if (!configPath) {
  process.stderr.write('usage: realtime-standalone <centrifugo-config.json>\n');
  process.exit(2);
}
const running = await runStandalone(configPath);
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
