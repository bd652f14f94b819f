// Shared scaffolding for benches that drive a real Parley server in a child process (SQLite in a temp data dir,
// its default embedded setup) with autocannon from the bench process.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCli } from '../../packages/server/src/cli/main.ts';
import type { LoadResult } from './http-load.ts';

/**
 * The fields of an autocannon result the benches read (autocannon ships no type declarations); the lean generator
 * in http-load.ts answers with the same shape.
 */
export type AutocannonResult = LoadResult;

export type BenchEnv = Record<string, string | undefined>;

export const repoRoot = new URL('../../', import.meta.url).pathname;

/**
 * How long a server may take to come up: on the shared 2-core machine, with the load average past 20, starting from
 * the TypeScript sources took more than a minute.
 */
const START_TIMEOUT_MS = 180_000;

async function waitUntilUp(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${url} did not come up`);
}

/** Resolves once `url` answers; a child that does not come up is stopped, so a failed start leaves nothing running. */
export async function waitForUp(child: ChildProcess, url: string): Promise<ChildProcess> {
  try {
    await waitUntilUp(url, child);
  } catch (error) {
    await stop(child);
    throw error;
  }
  return child;
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(10_000).then(() => child.kill('SIGKILL'))]);
}

/** The environment of a Parley on 127.0.0.1:`port` with SQLite in `dataDir` (no PostgreSQL, no Redis). */
export function parleyEnv(port: number, dataDir: string, extra: BenchEnv): BenchEnv {
  return {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    PARLEY_DATA_DIR: dataDir,
    PARLEY_PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: undefined,
    REDIS_URL: undefined,
    ...extra,
  };
}

/** Runs `parley <args> --json` in-process against `env`'s data dir and returns its parsed JSON output. */
export async function parleyCli(env: BenchEnv, args: string[]): Promise<Record<string, string>> {
  const out: string[] = [];
  const code = await runCli([...args, '--json'], (line) => out.push(line), { env });
  // Only the command words: option values can be secrets (`connectors create --api-key …`).
  const firstOption = args.findIndex((a) => a.startsWith('-'));
  const command = (firstOption === -1 ? args : args.slice(0, firstOption)).join(' ');
  if (code !== 0) throw new Error(`parley ${command} failed: ${out.pop()}`);
  return JSON.parse(out.pop()!);
}

/**
 * A company "Bench" and an API client allowed to write and read connectors, named `name` (default "bench"), created
 * with any further `api-clients create` options (`--auth-method private_key_jwt`, `--dpop required`, …).
 */
export async function createBenchClient(
  env: BenchEnv,
  name = 'bench',
  options: string[] = [],
): Promise<{ company: Record<string, string>; client: Record<string, string> }> {
  const company = await parleyCli(env, ['companies', 'create', '--name', 'Bench']);
  const client = await parleyCli(env, [
    'api-clients',
    'create',
    '--company',
    company.id!,
    '--name',
    name,
    '--scopes',
    'connector:write connector:read',
    ...options,
  ]);
  return { company, client };
}

/**
 * `parley serve` in production mode, resolved once /readyz answers. `root`: the checkout to run (another one, with
 * its own node_modules, to compare two versions side by side in one run; the data dir's schema must suit both).
 */
export async function startParleyProcess(
  env: BenchEnv,
  port: number,
  root = repoRoot,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(root, 'packages/server/bin/parley.js'), 'serve'], {
    cwd: root,
    // One process unless a row asks for workers: figures are per node.
    env: { PARLEY_WORKERS: '1', ...env, NODE_ENV: 'production' },
    // The server's JSON log goes nowhere, as to a log shipper.
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return waitForUp(child, `http://127.0.0.1:${port}/readyz`);
}

/** Throws when a load run saw anything but 2xx answers: its figures would not be those of the path measured. */
export function assertClean(name: string, r: LoadResult): void {
  if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0) {
    throw new Error(`${name}: ${r.non2xx} non-2xx answers, ${r.errors} errors, ${r.timeouts} timeouts`);
  }
}

/** An HTTP Basic authorization header value (RFC 7617). */
export const basicAuth = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** A number right-aligned in a 9-wide table cell. */
export const fmt = (n: number, digits = 1) => n.toFixed(digits).padStart(9);
