import { type Command, Redis, type RedisOptions } from 'ioredis';
import { BrokerError } from './errors.ts';

/** How long one Redis command may take before it fails with `broker_unavailable`. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 1_000;
/**
 * Reconnect attempts while Redis is away are at most this far apart (plus up to 100 ms of jitter): once the path is
 * back, a node is connected again within about this long, so what it could not deliver meanwhile reaches clients
 * within the 2 s the contract allows (README "Redis outages"). A refused or timed-out attempt costs next to nothing.
 */
export const MAX_RECONNECT_DELAY_MS = 500;
/** How often an idle connection is checked with a PING (`keepAlive`). */
export const DEFAULT_KEEP_ALIVE_MS = 1_000;

/**
 * ioredis options shared by every Redis connection of Parley (the broker's, presence, and the server's rate limits
 * and reply signals): how a Redis outage is handled (README "Redis outages"). ioredis' defaults queue commands
 * while disconnected and retry each one across 20 reconnects, so a publish would wait for Redis instead of
 * failing; here a command fails at once while Redis cannot be reached, and the connection keeps coming back by
 * itself. A command's time-out is not among them: `OutageAwareRedis` keeps it (see there for why).
 */
export function outageAwareOptions(commandTimeoutMs: number = DEFAULT_COMMAND_TIMEOUT_MS): RedisOptions {
  return {
    lazyConnect: true,
    // Disconnected (down, restarting, reconnecting): reject at once rather than queue until Redis returns.
    enableOfflineQueue: false,
    // Commands in flight when the connection drops fail right then, and are not sent again after the reconnect
    // (the caller was already told they failed).
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    // A connect that hangs (packets dropped) is abandoned and tried again, so the first attempt after the path is
    // back gets through instead of waiting for the kernel's SYN retransmissions.
    connectTimeout: commandTimeoutMs,
    // Reconnect forever; the jitter keeps the nodes of a cluster from reconnecting in lockstep.
    retryStrategy: (attempt: number) =>
      Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS) + Math.floor(Math.random() * 100),
  };
}

/** A command sent and not answered yet, and when it is late. */
interface Unanswered {
  command: Command;
  deadline: number;
}

/**
 * A Redis connection with Parley's outage settings (`outageAwareOptions`) whose commands fail after
 * `commandTimeoutMs` without an answer — a Redis that keeps the connection open but does not answer (stopped,
 * partitioned) — and which then drops its socket and reconnects, so every later command fails at once (not ready)
 * instead of waiting out its own time-out one after another (what made publishes queue up behind each other during
 * a partition).
 *
 * Why not ioredis' own `commandTimeout` and `socketTimeout`: both are plain timers, and Node runs due timers before
 * it reads the sockets (timers phase, then poll). When something holds the event loop longer than the time-out — a
 * burst of a thousand visitors on a loaded machine — the answer is already in the socket's buffer, but the timer
 * fires first: the command fails, the socket is dropped, and publishes, heartbeats and rate limits see an outage that
 * never was (the burst bench on PostgreSQL and Redis lost replies that way: clients were told to resubscribe once the
 * "outage" ended). Here a late command is judged after one more poll phase (`setImmediate` runs after it), when
 * whatever Redis sent meanwhile has been read. One timer per connection, for its oldest waiting command: commands
 * are answered in the order they were sent.
 */
export class OutageAwareRedis extends Redis {
  // Names no Redis command has (ioredis puts one method per command on the class: `watch` is WATCH).
  private readonly unanswered: Unanswered[] = [];
  private lateTimer: NodeJS.Timeout | undefined;
  private judging = false;
  private readonly timeoutMs: number;

  constructor(
    url: string,
    options: Omit<RedisOptions, 'replyMapping'> = {},
    commandTimeoutMs = DEFAULT_COMMAND_TIMEOUT_MS,
  ) {
    // Replies keep ioredis' default ("legacy") shapes, as with every other connection here.
    super(url, { ...outageAwareOptions(commandTimeoutMs), ...options, replyMapping: 'legacy' });
    this.timeoutMs = commandTimeoutMs;
  }

  // A pipeline passes a third argument (its node), hence the rest.
  override sendCommand(command: Command, ...rest: unknown[]): unknown {
    const result = (super.sendCommand as (command: Command, ...rest: unknown[]) => unknown).call(
      this,
      command,
      ...rest,
    );
    if (!command.isSettled) {
      this.unanswered.push({ command, deadline: performance.now() + this.timeoutMs });
      this.armLateTimer();
    }
    return result;
  }

  /** Another connection to the same Redis with the same settings (ioredis' `duplicate` would make a plain one). */
  withSameSettings(override: Omit<RedisOptions, 'replyMapping'> = {}): OutageAwareRedis {
    const { replyMapping: _, ...options } = this.options;
    return new OutageAwareRedis('', { ...options, ...override }, this.timeoutMs);
  }

  /** Arms the timer for the oldest command still waiting, if none is armed. */
  private armLateTimer(): void {
    if (this.lateTimer !== undefined || this.judging) return;
    this.forgetAnswered();
    const oldest = this.unanswered[0];
    if (!oldest) return;
    this.lateTimer = setTimeout(
      () => {
        this.lateTimer = undefined;
        // Read what the socket holds first (the poll phase comes before `setImmediate`), then judge.
        this.judging = true;
        setImmediate(() => {
          this.judging = false;
          this.failLate();
        });
      },
      Math.max(0, oldest.deadline - performance.now()),
    );
    this.lateTimer.unref();
  }

  /** Fails the commands past their deadline and drops the socket when one was still waiting; re-arms otherwise. */
  private failLate(): void {
    this.forgetAnswered();
    const now = performance.now();
    let late = 0;
    while (late < this.unanswered.length && this.unanswered[late]!.deadline <= now) late++;
    const expired = this.unanswered.splice(0, late).filter(({ command }) => !command.isSettled);
    for (const { command } of expired) command.reject(new Error('Command timed out'));
    if (expired.length > 0)
      this.stream?.destroy(new Error(`Socket timeout: no answer to a command within ${this.timeoutMs} ms`));
    this.armLateTimer();
  }

  private forgetAnswered(): void {
    let answered = 0;
    while (answered < this.unanswered.length && this.unanswered[answered]!.command.isSettled) answered++;
    if (answered > 0) this.unanswered.splice(0, answered);
  }
}

/**
 * PINGs `redis` every `intervalMs` while it is ready, so a connection that stopped answering is noticed (the PING
 * times out and `socketTimeout` drops the socket) even when nothing else is sent on it: a PUB/SUB connection only
 * listens, and an idle node sends nothing. A dead connection that nobody writes to would otherwise look healthy
 * for as long as the partition lasts, and come back with whatever TCP still holds, seconds late. Returns a stop.
 */
export function keepAlive(redis: Redis, intervalMs: number = DEFAULT_KEEP_ALIVE_MS): () => void {
  const timer = setInterval(() => {
    if (redis.status === 'ready') redis.ping().catch(() => {});
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Resolves once the connection is ready: connects a client that never connected (or was ended), or waits for the
 * attempt in progress. Rejects when that attempt fails; ioredis keeps reconnecting in the background.
 */
export function whenReady(redis: Redis): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  if (redis.status === 'wait' || redis.status === 'end') return redis.connect();
  return new Promise((resolve, reject) => {
    const onReady = (): void => {
      redis.off('close', onClose);
      resolve();
    };
    const onClose = (): void => {
      redis.off('ready', onReady);
      reject(new Error(`connection closed while ${redis.status}`));
    };
    redis.once('ready', onReady);
    redis.once('close', onClose);
  });
}

/** Fails a command before it is sent when the connection is not ready, with a message naming the state. */
export function assertConnected(redis: Redis): void {
  if (redis.status !== 'ready') {
    throw new BrokerError('broker_unavailable', `redis: not connected (${redis.status})`);
  }
}

/** Closes a connection: QUIT when connected, otherwise stop reconnecting at once. */
export async function quit(redis: Redis): Promise<void> {
  if (redis.status !== 'ready') {
    redis.disconnect();
    return;
  }
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}
