import { type ChildProcess, fork } from 'node:child_process';

/** A forked bench process answering `{ id, cmd, ... }` requests with `{ id, ... }` replies over IPC. */
export class ChildProcessClient {
  private nextId = 1;
  private readonly pending = new Map<number, (reply: Record<string, unknown>) => void>();
  private readonly ready: Promise<Record<string, unknown>>;
  readonly process: ChildProcess;

  constructor(file: string, args: string[], execArgv: string[] = []) {
    this.process = fork(file, args, {
      execArgv: ['--import', 'tsx', '--expose-gc', ...execArgv],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.ready = new Promise((resolve, reject) => {
      this.process.once('exit', (code) =>
        reject(new Error(`${file} exited with ${code} before it was ready`)),
      );
      this.process.on('message', (message: Record<string, unknown>) => {
        if (message.type === 'ready') resolve(message);
        const id = message.id as number | undefined;
        if (id !== undefined) {
          this.pending.get(id)?.(message);
          this.pending.delete(id);
        }
      });
    });
  }

  whenReady(): Promise<Record<string, unknown>> {
    return this.ready;
  }

  request<T = Record<string, unknown>>(
    cmd: string,
    body: Record<string, unknown> = {},
    timeoutMs = 120_000,
  ): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${cmd} timed out`));
      }, timeoutMs);
      this.pending.set(id, (reply) => {
        clearTimeout(timer);
        if (typeof reply.error === 'string') reject(new Error(reply.error));
        else resolve(reply as T);
      });
      this.process.send({ id, cmd, ...body });
    });
  }

  /** Asks the process to exit (so `--cpu-prof` can write its profile); kills it if it does not. */
  async stop(): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.process.once('exit', () => resolve()));
    this.process.send({ id: 0, cmd: 'exit' });
    const timer = setTimeout(() => this.process.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

type Handler = (
  message: Record<string, unknown>,
) => Promise<Record<string, unknown> | undefined> | Record<string, unknown> | undefined;

/** Child side: dispatches parent requests to `handlers` and replies with their result (or the error message). */
export function serveRequests(handlers: Record<string, Handler>, onExit: () => Promise<void> | void): void {
  process.on('message', async (message: Record<string, unknown>) => {
    const { id, cmd } = message as { id: number; cmd: string };
    if (cmd === 'exit') {
      await onExit();
      process.exit(0);
    }
    try {
      const handler = handlers[cmd];
      if (handler === undefined) throw new Error(`unknown command ${cmd}`);
      const result = (await handler(message)) ?? {};
      process.send?.({ id, ...result });
    } catch (error) {
      process.send?.({ id, error: error instanceof Error ? error.message : String(error) });
    }
  });
  process.on('disconnect', () => process.exit(0));
}
