#!/usr/bin/env node
// Entry point of `npx parley …`: the production build (dist/, see bin/build-state.mjs) when it is present and
// newer than the sources; otherwise the TypeScript sources through tsx, so a fresh checkout needs no build step.
import { pathToFileURL } from 'node:url';
import { BUILT_ENTRY, buildIsCurrent } from './build-state.mjs';

const cli = buildIsCurrent() ? await import(pathToFileURL(BUILT_ENTRY).href) : await fromSources();
process.exitCode = await cli.runCli(process.argv.slice(2));

async function fromSources() {
  const { register } = await import('tsx/esm/api');
  register();
  return import('../src/cli/main.ts');
}
