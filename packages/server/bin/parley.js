#!/usr/bin/env node
// Entry point of `npm start` and `npx parley …`: registers tsx so the TypeScript sources run without a build step.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../src/cli/main.ts');
process.exitCode = await runCli(process.argv.slice(2));
