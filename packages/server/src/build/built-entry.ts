// The entry of the production bundle, dist/parley.mjs (see build.ts): the CLI, with the browser assets that the
// build wrote next to it. `npm start` (scripts/start.mjs) and `npx parley` (bin/parley.js) import it.
import { fileURLToPath } from 'node:url';
import { usePrebuiltAssets } from '../widget-assets/prebuilt-assets.ts';

usePrebuiltAssets(fileURLToPath(new URL('./assets/', import.meta.url)));

export { runCli } from '../cli/main.ts';
