// One Parley node as a real child process: `node packages/server/bin/parley.js serve` (what `npm start` runs), or
// for the soak a wrapper that reports the process's own figures before starting the same server. Its output goes
// to a log file; every exit it was not told to make is recorded, because "every node alive afterwards" is a goal.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { waitFor } from '@parley/testing/wait';
import { onCleanup } from './cleanup.ts';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const PARLEY_BIN = fileURLToPath(new URL('../../packages/server/bin/parley.js', import.meta.url));
const INSTRUMENTED = fileURLToPath(new URL('./instrumented-node.ts', import.meta.url));

export interface NodeExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when the suite sent the signal that ended it. */
  expected: boolean;
  at: number;
}

export interface ParleyNodeOptions {
  name: string;
  port: number;
  env: Record<string, string>;
  logFile: string;
  /** Write a JSON line of process figures to this file every `reportIntervalMs` (the soak's view inside). */
  report?: { file: string; intervalMs: number };
}

export class ParleyNode {
  private child: ChildProcess | null = null;
  private readonly log: WriteStream;
  readonly exits: NodeExit[] = [];
  private expectingExit = false;

  constructor(readonly options: ParleyNodeOptions) {
    this.log = createWriteStream(options.logFile, { flags: 'a' });
    onCleanup(
      `Parley node ${options.name}`,
      async () => {
        await this.kill9();
        await new Promise<void>((resolve) => this.log.end(resolve));
      },
      () => this.child?.kill('SIGKILL'),
    );
  }

  get name(): string {
    return this.options.name;
  }

  get port(): number {
    return this.options.port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.options.port}`;
  }

  get logFile(): string {
    return this.options.logFile;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Exits nobody asked for (a crash: an unhandled error, an exit on a lost connection…). */
  get unexpectedExits(): NodeExit[] {
    return this.exits.filter((e) => !e.expected);
  }

  /** Starts the node (again, on the same port after a stop) and waits until /readyz answers 200. */
  async start(timeoutMs = 60_000): Promise<void> {
    if (this.running) throw new Error(`${this.name} is already running`);
    const args = this.options.report
      ? ['--import', 'tsx', INSTRUMENTED, this.options.report.file, String(this.options.report.intervalMs)]
      : [PARLEY_BIN, 'serve'];
    this.log.write(`\n==== ${new Date().toISOString()} faults: starting ${this.name} on ${this.port}\n`);
    const child = spawn(process.execPath, args, {
      cwd: repoRoot,
      // One process per node: the faults act on nodes (kill -9, SIGTERM), not on cluster workers.
      env: { PARLEY_WORKERS: '1', ...this.options.env, PORT: String(this.options.port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.pipe(this.log, { end: false });
    child.stderr!.pipe(this.log, { end: false });
    this.expectingExit = false;
    child.once('exit', (code, signal) => {
      this.exits.push({ code, signal, expected: this.expectingExit, at: Date.now() });
      this.log.write(
        `\n==== ${new Date().toISOString()} faults: ${this.name} exited code=${code} signal=${signal}\n`,
      );
    });
    this.child = child;
    await waitFor(
      `${this.name} to answer /readyz`,
      async () => {
        if (!this.running) throw new Error(`${this.name} exited while starting; see ${this.logFile}`);
        return this.answers('/readyz');
      },
      timeoutMs,
      200,
    );
  }

  /** True when `path` (default /healthz) answers 200 within 2 s, straight to the node (not through the balancer). */
  async answers(path = '/healthz'): Promise<boolean> {
    try {
      const res = await fetch(`${this.url}${path}`, { signal: AbortSignal.timeout(2_000) });
      await res.body?.cancel();
      return res.status === 200;
    } catch {
      return false;
    }
  }

  /** `kill -9`: the process dies on the spot, mid-reply, with nothing flushed. */
  async kill9(): Promise<void> {
    await this.signal('SIGKILL', 10_000);
  }

  /**
   * SIGTERM and wait for the exit (a graceful drain); resolves with the exit code, or null when it did not exit
   * within `timeoutMs` (it is then killed).
   */
  async terminate(timeoutMs = 30_000): Promise<number | null> {
    const exit = await this.signal('SIGTERM', timeoutMs);
    if (exit) return exit.code;
    await this.kill9();
    return null;
  }

  /** Why the node's last run ended, as its log says (Node's crash report, or its last error log line). */
  errorHint(): string {
    let text = '';
    try {
      text = readFileSync(this.logFile, 'utf8');
    } catch {
      return '';
    }
    return crashSummary(text.slice(text.lastIndexOf('faults: starting')));
  }

  private async signal(signal: NodeJS.Signals, timeoutMs: number): Promise<NodeExit | null> {
    const child = this.child;
    if (!child || !this.running) return null;
    this.expectingExit = true;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const ended = await Promise.race([exited.then(() => true), sleep(timeoutMs).then(() => false)]);
    if (!ended) return null;
    this.child = null;
    return this.exits.at(-1) ?? null;
  }
}

/**
 * One line out of a node's output: Node's own crash report ("Unhandled 'error' event", an uncaught exception
 * with its `code`), else the last error-level JSON log line.
 */
export function crashSummary(output: string): string {
  const lines = output.split('\n');
  const thrown = lines.findIndex((l) => /^(\w*Error|error)(\s\[\w+\])?: /.test(l));
  if (thrown >= 0) {
    const unhandled = output.match(/Emitted 'error' event on (\w+) instance/);
    const code = output.slice(output.indexOf(lines[thrown]!)).match(/\n\s+code: '([^']+)'/);
    return [
      unhandled ? `Unhandled 'error' event on ${unhandled[1]}:` : 'uncaught:',
      lines[thrown]!.trim().slice(0, 160),
      code ? `(${code[1]})` : '',
    ]
      .filter(Boolean)
      .join(' ');
  }
  const logged = lines.filter((l) => /"level":(50|60)/.test(l)).at(-1);
  return logged ? describeLogLine(logged) : '';
}

/** A JSON log line reduced to its message and error. */
function describeLogLine(line: string): string {
  try {
    const entry = JSON.parse(line) as { msg?: string; err?: { message?: string; code?: string } | string };
    const err = typeof entry.err === 'string' ? entry.err : entry.err?.message;
    const code = typeof entry.err === 'object' && entry.err?.code ? ` (${entry.err.code})` : '';
    return `${entry.msg ?? ''}${err ? `: ${err}${code}` : ''}`.slice(0, 200);
  } catch {
    return line.trim().slice(0, 200);
  }
}
