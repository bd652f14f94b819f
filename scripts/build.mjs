#!/usr/bin/env node
// `npm run build`: compiles the server, its CLI and the browser assets it serves into dist/ (see
// packages/server/src/build/build.ts). The compiler (esbuild, and tsx to load the build code) runs here only:
// the built server needs neither.
import { register } from 'tsx/esm/api';
import { DIST } from '../packages/server/bin/build-state.mjs';

register();
const { buildProduction } = await import('../packages/server/src/build/build.ts');
const started = performance.now();
const result = await buildProduction(DIST);
console.log(
  `built ${result.files.map((f) => `dist/${f}`).join(', ')} in ${Math.round(performance.now() - started)} ms`,
);
