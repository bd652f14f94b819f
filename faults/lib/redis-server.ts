// A private Redis for one fault run: a child `redis-server` on a free port without persistence, which the suite
// kills and starts again on the same port. The shared Redis on 6379 is never touched.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { connect } from 'node:net';
import { freePort } from '@parley/testing/process';
import { waitFor } from '@parley/testing/wait';
import { onCleanup } from './cleanup.ts';
import { requireCommands } from './commands.ts';

/** True when a Redis on `port` answers PING with PONG within a second. */
export function redisAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

export class PrivateRedis {
  private child: ChildProcess | null = null;
  private readonly log: WriteStream;

  private constructor(
    readonly port: number,
    logFile: string,
  ) {
    this.log = createWriteStream(logFile, { flags: 'a' });
  }

  static async create(logFile: string): Promise<PrivateRedis> {
    requireCommands({ 'redis-server': 'redis-server' });
    const redis = new PrivateRedis(await freePort(), logFile);
    onCleanup(
      `Redis on ${redis.port}`,
      async () => {
        await redis.stop('SIGKILL');
        redis.log.end();
      },
      () => redis.child?.kill('SIGKILL'),
    );
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts redis-server on this Redis's port (again, after a stop) and waits until it answers PING. */
  async start(): Promise<void> {
    if (this.child) throw new Error('Redis is already running');
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout!.pipe(this.log, { end: false });
    child.stderr!.pipe(this.log, { end: false });
    child.once('exit', () => {
      if (this.child === child) this.child = null;
    });
    this.child = child;
    await waitFor(`Redis on ${this.port}`, () => redisAnswers(this.port), 15_000, 100);
  }

  /** Stops redis-server: SIGKILL is a crash (nothing flushed), SIGTERM a clean shutdown. Waits for the exit. */
  async stop(signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await exited;
    this.child = null;
  }
}
