import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

// The two below are files a child process runs, not modules imported here, so they are found by their place in the
// repository (this file is packages/testing/src/process.ts).

/** `npx parley`'s entry: the production build when it is current, else the sources (packages/server/bin/parley.js). */
export const PARLEY_BIN = fileURLToPath(new URL('../../server/bin/parley.js', import.meta.url));

/**
 * Node arguments that run the CLI from its TypeScript sources whatever dist/ holds
 * (packages/server/src/cli/run.ts): what tests spawn, so the suite always exercises the sources. `[...PARLEY_CLI, 'serve']` is `npx parley serve`.
 */
export const PARLEY_CLI = [
  '--import',
  'tsx',
  fileURLToPath(new URL('../../server/src/cli/run.ts', import.meta.url)),
];

/** A port that was free a moment ago (for child processes that must be told their port up front). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  stdout: () => string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface ServerCommand {
  /** Program and arguments; by default `parley serve` from the sources. */
  command: string;
  args: string[];
  cwd?: string;
}

/**
 * Runs `parley serve` (or another command that serves, such as `npm start`) as a real child process and waits
 * until /healthz answers. A command other than the default runs in a process group of its own, and `stop` signals
 * the whole group: `npm start` is npm, a shell and node.
 */
export async function startServerProcess(
  env: Record<string, string>,
  launch?: ServerCommand,
): Promise<ServerProcess> {
  const port = await freePort();
  const { command, args, cwd } = launch ?? { command: process.execPath, args: [...PARLEY_CLI, 'serve'] };
  const group = launch !== undefined;
  const child = spawn(command, args, {
    cwd,
    // One process unless the test asks for workers (PARLEY_WORKERS): signals and exit codes are the node's.
    env: { ...process.env, PARLEY_WORKERS: '1', HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: group,
  });
  const signal = (name: NodeJS.Signals) => (group ? process.kill(-child.pid!, name) : child.kill(name));
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}):\n${out}`);
    try {
      if ((await fetch(`${baseUrl}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      signal('SIGKILL');
      throw new Error(`server did not start in time:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    baseUrl,
    stdout: () => out,
    stop: (name = 'SIGTERM') =>
      new Promise((resolve) => {
        // A process ended by a signal has no exit code, only a signal code: it is gone all the same.
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        // 'close': every process of the group has exited and its output is read.
        child.once('close', (code) => resolve(code));
        signal(name);
      }),
  };
}
