// The CLI straight from its TypeScript sources, whatever dist/ holds: `node --import tsx …/cli/run.ts <command>`.
// Tests spawn this (packages/testing/src/process.ts), so the suite always runs the sources; bin/parley.js is the users' entry.
import { runCli } from './main.ts';

process.exitCode = await runCli(process.argv.slice(2));
