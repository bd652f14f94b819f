import { spawn } from 'node:child_process';
import { runCli } from '@parley/server/internal/cli/main';
import { testPostgresUrl } from './databases.ts';
import { PARLEY_CLI } from './process.ts';
import type { TestServer } from './test-server.ts';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as the one JSON object `--json` prints. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read fields of whichever command ran.
  json: any;
}

/**
 * Runs the real CLI (from its sources, `packages/server/src/cli/run.ts`) as a child process against a test server's data: its data folder, and for
 * PostgreSQL its schema (through `options=-c search_path=…` in DATABASE_URL). `env` adds or overrides variables.
 */
export async function runParley(
  server: TestServer,
  args: string[],
  env: Record<string, string> = {},
): Promise<CliRun> {
  const base = await cliEnvFor(server);
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !/^(PARLEY_|DATABASE_URL|REDIS_URL|PORT|HOST)/.test(k) || k.startsWith('PARLEY_TEST_'),
    ),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...PARLEY_CLI, ...args], {
      env: { ...inherited, ...base, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, json: jsonOf(stdout) });
    });
  });
}

/**
 * The same CLI (`runCli`: argument parsing through `--json` output) run in this process with its own context on the
 * server's data — for cases where a separate process shows nothing more and would only cost seconds of start-up.
 */
export async function runParleyInProcess(
  server: TestServer,
  args: string[],
  env: Record<string, string> = {},
): Promise<CliRun> {
  const lines: string[] = [];
  const code = await runCli(args, (line) => lines.push(line), {
    env: { ...(await cliEnvFor(server)), ...env },
  });
  const stdout = lines.join('\n');
  return { code, stdout, stderr: '', json: jsonOf(stdout) };
}

/** The one JSON object `--json` prints, or undefined for any other output. */
function jsonOf(stdout: string): unknown {
  try {
    return JSON.parse(stdout);
  } catch {
    return undefined;
  }
}

/** The environment a CLI beside `server` has: its data folder and, on PostgreSQL, its database and schema. */
export async function cliEnvFor(server: TestServer): Promise<Record<string, string>> {
  const env: Record<string, string> = { PARLEY_DATA_DIR: server.dataDir, LOG_LEVEL: 'warn' };
  // The schema the test server runs in (its search path; packages/server/src/storage/database.ts): known, so not asked of the database.
  if (server.schema !== undefined) {
    env.DATABASE_URL = `${testPostgresUrl()}?options=${encodeURIComponent(`-c search_path=${server.schema}`)}`;
  }
  return env;
}
