import type { Redis } from 'ioredis';
import { DEFAULT_IDEMPOTENCY_TTL_MS, reportHandlerErrorAsWarning } from './defaults.ts';
import { newEpoch } from './epoch.ts';
import { BrokerError } from './errors.ts';
import {
  decodeChannelMessage,
  decodePublicationBody,
  encodeJoin,
  encodeLeave,
  encodePublicationBody,
  encodeUnpositionedPublication,
} from './redis-codec.ts';
import {
  assertConnected,
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_KEEP_ALIVE_MS,
  keepAlive,
  MAX_RECONNECT_DELAY_MS,
  OutageAwareRedis,
  quit,
  whenReady,
} from './redis-connection.ts';
import {
  HISTORY,
  PRESENCE_ADD,
  PRESENCE_GET,
  PRESENCE_REMOVE,
  PRESENCE_STATS,
  PUBLISH,
  runScript,
} from './redis-scripts.ts';
import type {
  Broker,
  BrokerEventHandler,
  ClientInfo,
  HistoryRequest,
  HistoryResult,
  PresenceManager,
  PresenceStats,
  PublishRequest,
  StreamPosition,
} from './types.ts';

export interface RedisBrokerOptions {
  /** `redis://[:password@]host:port[/db]`. */
  url: string;
  /** Prefix of every key and PUB/SUB channel, so several deployments can share one Redis. Default `parley`. */
  prefix?: string;
  /** Channels per SUBSCRIBE/UNSUBSCRIBE command (Centrifuge batches 512). */
  subscribeBatchSize?: number;
  /**
   * Connection errors (Redis down, reconnecting) and failed UNSUBSCRIBEs. Commands fail at once with `BrokerError`
   * `broker_unavailable` meanwhile, and the connections come back by themselves. Default: ignored.
   */
  onError?: (error: Error) => void;
  /**
   * A Redis command that takes longer fails with `broker_unavailable`, and its connection is dropped and made
   * again (so the next commands fail at once instead of waiting as long). Default 1000 ms.
   */
  commandTimeoutMs?: number;
  /**
   * Both connections are PINGed this often while idle, so a Redis that stopped answering (a partition: nothing
   * is closed, nothing arrives) is noticed within about this plus `commandTimeoutMs`. Default 1000 ms.
   */
  keepAliveMs?: number;
  /** Exceptions thrown by the event handler while a message is delivered. Default: `process.emitWarning`. */
  onHandlerError?: (error: unknown) => void;
}

const DEFAULT_PREFIX = 'parley';

/** Key and PUB/SUB channel names (docs/protocol.md "Redis broker layout"). */
class RedisKeys {
  readonly control: string;
  readonly clientChannelPrefix: string;

  constructor(readonly prefix: string) {
    this.control = `${prefix}.control`;
    this.clientChannelPrefix = `${prefix}.client.`;
  }

  pubsub(channel: string): string {
    return this.clientChannelPrefix + channel;
  }

  stream(channel: string): string {
    return `${this.prefix}.stream.${channel}`;
  }

  meta(channel: string): string {
    return `${this.prefix}.stream.meta.${channel}`;
  }

  /** The channel's length keeps `a.b`+`c` and `a`+`b.c` apart. */
  idempotencyResult(channel: string, key: string): string {
    return `${this.prefix}.result.${channel.length}.${channel}.${key}`;
  }

  presenceData(channel: string): string {
    return `${this.prefix}.presence.data.${channel}`;
  }

  presenceExpiry(channel: string): string {
    return `${this.prefix}.presence.expire.${channel}`;
  }
}

function unavailable(error: unknown): BrokerError {
  if (error instanceof BrokerError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new BrokerError('broker_unavailable', `redis: ${reason}`, { cause: error });
}

function parsePosition(text: string): StreamPosition | undefined {
  if (text === '') return undefined;
  const colon = text.indexOf(':');
  return { offset: Number(text.slice(0, colon)), epoch: text.slice(colon + 1) };
}

function* batches<T>(items: T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/**
 * Broker for several nodes sharing one Redis (docs/protocol.md "Redis broker layout"): PUB/SUB fan-out with a
 * node-level SUBSCRIBE only for channels that have local subscribers, history in Redis Streams appended by
 * one Lua script per publish, and a control channel every node listens to. PUB/SUB is at-most-once; offsets
 * let the engine notice a loss and recover from the stream (docs/protocol.md "Positioning").
 */
export class RedisBroker implements Broker {
  private readonly keys: RedisKeys;
  private readonly commands: Redis;
  private readonly subscriber: Redis;
  private readonly channels = new Set<string>();
  private readonly batchSize: number;
  private readonly onHandlerError: (error: unknown) => void;
  private readonly onError: (error: Error) => void;
  private handler: BrokerEventHandler | undefined;
  private state: 'new' | 'running' | 'closed' = 'new';
  /** The start in progress, shared by overlapping `run` calls. */
  private starting: Promise<void> | undefined;
  /** Bumped whenever the subscriber connection opens or drops: a restore only counts for its own connection. */
  private subscriberGeneration = 0;
  /** The subscriber connection holds the control channel and every wanted channel. */
  private subscriptionsRestored = false;
  /** A connection dropped since the broker last was healthy: PUB/SUB messages may have been lost meanwhile. */
  private interrupted = false;
  private readonly keepAliveMs: number;
  private readonly stopKeepAlive: Array<() => void> = [];

  constructor(options: RedisBrokerOptions) {
    this.keys = new RedisKeys(options.prefix ?? DEFAULT_PREFIX);
    this.batchSize = options.subscribeBatchSize ?? 512;
    this.onHandlerError = options.onHandlerError ?? reportHandlerErrorAsWarning;
    this.onError = options.onError ?? (() => {});
    this.keepAliveMs = options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS;
    const timeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    this.commands = new OutageAwareRedis(options.url, { enableAutoPipelining: true }, timeoutMs);
    // We resubscribe ourselves after a reconnect, from our own set of wanted channels (see `restoreSubscriptions`).
    this.subscriber = new OutageAwareRedis(options.url, { autoResubscribe: false }, timeoutMs);
    // Every connection has an 'error' listener: without one ioredis reports each failed reconnect on stderr.
    this.commands.on('error', this.onError);
    this.subscriber.on('error', this.onError);
    // Registered once, here: `run` may be called again after a failed connect (or twice at once), and a second
    // listener would deliver every message twice. `dispatch` drops messages until `run` has set the handler.
    this.subscriber.on('message', (channel: string, message: string) => this.dispatch(channel, message));
    // 'ready' fires again after every reconnect; a fresh connection has no subscriptions.
    this.subscriber.on('ready', () => this.onSubscriberReady());
    this.subscriber.on('close', () => {
      this.subscriberGeneration += 1;
      this.subscriptionsRestored = false;
      this.noteInterruption();
    });
    this.commands.on('close', () => this.noteInterruption());
    this.commands.on('ready', () => this.noteRestored());
  }

  /** Connects both connections and subscribes the control channel; `broker_unavailable` when Redis is away. */
  async run(handler: BrokerEventHandler): Promise<void> {
    this.assertOpen();
    if (this.state === 'running') return;
    this.handler = handler;
    this.starting ??= this.start().finally(() => {
      this.starting = undefined;
    });
    await this.starting;
  }

  /** Running, both connections ready, and every channel subscribed again after the last reconnect. */
  healthy(): boolean {
    return (
      this.state === 'running' &&
      this.commands.status === 'ready' &&
      this.subscriber.status === 'ready' &&
      this.subscriptionsRestored
    );
  }

  async subscribe(channels: string[]): Promise<void> {
    this.assertOpen();
    const added = channels.filter((channel) => !this.channels.has(channel));
    for (const channel of added) this.channels.add(channel);
    try {
      assertConnected(this.subscriber);
      await this.sendInBatches('subscribe', added);
    } catch (error) {
      // The caller treats these channels as not subscribed: a reconnect must not subscribe them behind its back.
      for (const channel of added) this.channels.delete(channel);
      throw unavailable(error);
    }
  }

  async unsubscribe(channels: string[]): Promise<void> {
    this.assertOpen();
    const removed = channels.filter((channel) => this.channels.delete(channel));
    // The wanted set is what counts: `dispatch` drops messages of channels outside it and a reconnect subscribes
    // only the set. So while disconnected there is nothing to undo, and a failed UNSUBSCRIBE leaves nothing behind
    // that matters (failing here would only make the caller retry in a loop until Redis returns).
    if (this.subscriber.status !== 'ready') return;
    try {
      await this.sendInBatches('unsubscribe', removed);
    } catch (error) {
      this.onError(unavailable(error));
    }
  }

  async publish(request: PublishRequest): Promise<StreamPosition | undefined> {
    this.assertOpen();
    const { channel } = request;
    const body = encodePublicationBody(request.data, Date.now(), request.info, request.tags, request.delta);
    try {
      assertConnected(this.commands);
      if (request.history === undefined && request.idempotencyKey === undefined) {
        await this.commands.publish(this.keys.pubsub(channel), encodeUnpositionedPublication(body));
        return undefined;
      }
      const history = request.history;
      const reply = (await runScript(
        this.commands,
        PUBLISH,
        [
          this.keys.stream(channel),
          this.keys.meta(channel),
          request.idempotencyKey === undefined
            ? ''
            : this.keys.idempotencyResult(channel, request.idempotencyKey),
        ],
        [
          body,
          history?.size ?? 0,
          history?.ttlMs ?? 0,
          history?.metaTtlMs ?? 0,
          newEpoch(),
          this.keys.pubsub(channel),
          request.idempotencyTtlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS,
          history === undefined ? '0' : '1',
        ],
      )) as [number, string];
      return parsePosition(reply[1]);
    } catch (error) {
      throw unavailable(error);
    }
  }

  async publishJoin(channel: string, info: ClientInfo): Promise<void> {
    await this.publishRaw(this.keys.pubsub(channel), encodeJoin(info));
  }

  async publishLeave(channel: string, info: ClientInfo): Promise<void> {
    await this.publishRaw(this.keys.pubsub(channel), encodeLeave(info));
  }

  async publishControl(message: string): Promise<void> {
    await this.publishRaw(this.keys.control, message);
  }

  async history(request: HistoryRequest): Promise<HistoryResult> {
    this.assertOpen();
    const { since, reverse, limit, channel } = request;
    // Bounds are computed here so Lua never formats big numbers (its tostring switches to exponent notation).
    const range = reverse
      ? ['xrevrange', since ? String(since.offset - 1) : '+', '-']
      : ['xrange', since ? String(since.offset + 1) : '-', '+'];
    const nothingBefore = reverse === true && since !== undefined && since.offset <= 1;
    try {
      assertConnected(this.commands);
      const [top, epoch, entries] = (await runScript(
        this.commands,
        HISTORY,
        [this.keys.stream(channel), this.keys.meta(channel)],
        [newEpoch(), request.history.metaTtlMs, nothingBefore ? 0 : limit, ...range],
      )) as [string, string, [string, string[]][]];
      const publications = entries.map(([id, fields]) =>
        decodePublicationBody(fields[1] ?? '', Number.parseInt(id, 10)),
      );
      return { publications, position: { offset: Number(top), epoch } };
    } catch (error) {
      throw unavailable(error);
    }
  }

  async removeHistory(channel: string): Promise<void> {
    this.assertOpen();
    try {
      assertConnected(this.commands);
      // The meta stays: offsets keep counting, so positions never go backwards under one epoch.
      await this.commands.del(this.keys.stream(channel));
    } catch (error) {
      throw unavailable(error);
    }
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.channels.clear();
    this.handler = undefined;
    for (const stop of this.stopKeepAlive.splice(0)) stop();
    this.subscriber.removeAllListeners('ready');
    await Promise.all([quit(this.subscriber), quit(this.commands)]);
  }

  private async start(): Promise<void> {
    try {
      await Promise.all([whenReady(this.commands), whenReady(this.subscriber)]);
      this.assertOpen();
      // From here on every 'ready' of the subscriber restores the subscriptions by itself.
      this.state = 'running';
      if (this.stopKeepAlive.length === 0) {
        this.stopKeepAlive.push(keepAlive(this.commands, this.keepAliveMs));
        this.stopKeepAlive.push(keepAlive(this.subscriber, this.keepAliveMs));
      }
      await this.restoreSubscriptions();
    } catch (error) {
      if (this.state === 'running') this.state = 'new';
      throw unavailable(error);
    }
  }

  private onSubscriberReady(): void {
    this.subscriberGeneration += 1;
    this.subscriptionsRestored = false;
    if (this.state !== 'running') return;
    void this.restoreUntilDone(this.subscriberGeneration);
  }

  /**
   * Restores the subscriptions of this connection, trying again while it stays up: a SUBSCRIBE that times out
   * (a Redis still loading, a busy one) would otherwise leave channels unsubscribed, their publications lost
   * and `healthy()` false, with no 'ready' to come and repair it. A dropped connection ends the loop; its next
   * 'ready' starts a new one.
   */
  private async restoreUntilDone(generation: number): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      if (this.state !== 'running' || generation !== this.subscriberGeneration) return;
      try {
        await this.restoreSubscriptions();
        this.noteRestored();
        return;
      } catch (error) {
        this.onError(unavailable(error));
        await new Promise((resolve) =>
          setTimeout(resolve, Math.min(100 * 2 ** attempt, MAX_RECONNECT_DELAY_MS)),
        );
      }
    }
  }

  /** Subscribes the control channel and every wanted channel on the current subscriber connection. */
  private async restoreSubscriptions(): Promise<void> {
    const generation = this.subscriberGeneration;
    const wanted = [this.keys.control, ...[...this.channels].map((channel) => this.keys.pubsub(channel))];
    await Promise.all(
      [...batches(wanted, this.batchSize)].map((batch) => this.subscriber.subscribe(...batch)),
    );
    if (generation === this.subscriberGeneration) this.subscriptionsRestored = true;
  }

  /** A connection of a running broker dropped: whatever PUB/SUB delivered meanwhile is lost to this node. */
  private noteInterruption(): void {
    if (this.state === 'running') this.interrupted = true;
  }

  /**
   * Healthy again after an interruption: the engine is told (`onRestored`), so it can check its subscribers'
   * positions at once instead of waiting for a quiet channel's periodic check (docs/protocol.md "Positioning").
   */
  private noteRestored(): void {
    if (!this.interrupted || !this.healthy()) return;
    this.interrupted = false;
    try {
      this.handler?.onRestored?.();
    } catch (error) {
      this.onHandlerError(error);
    }
  }

  private async publishRaw(pubsubChannel: string, message: string): Promise<void> {
    this.assertOpen();
    try {
      assertConnected(this.commands);
      await this.commands.publish(pubsubChannel, message);
    } catch (error) {
      throw unavailable(error);
    }
  }

  private async sendInBatches(command: 'subscribe' | 'unsubscribe', channels: string[]): Promise<void> {
    try {
      for (const batch of batches(channels, this.batchSize)) {
        await this.subscriber[command](...batch.map((channel) => this.keys.pubsub(channel)));
      }
    } catch (error) {
      throw unavailable(error);
    }
  }

  private dispatch(pubsubChannel: string, message: string): void {
    const handler = this.handler;
    if (handler === undefined) return;
    try {
      if (pubsubChannel === this.keys.control) {
        handler.onControl(message);
        return;
      }
      if (!pubsubChannel.startsWith(this.keys.clientChannelPrefix)) return;
      const channel = pubsubChannel.slice(this.keys.clientChannelPrefix.length);
      // A message already in flight when we unsubscribed must not reach the engine.
      if (!this.channels.has(channel)) return;
      this.deliver(handler, channel, message);
    } catch (error) {
      this.onHandlerError(error);
    }
  }

  private deliver(handler: BrokerEventHandler, channel: string, message: string): void {
    const decoded = decodeChannelMessage(message);
    if (decoded.kind === 'pub') handler.onPublication(channel, decoded.publication, decoded.epoch);
    else if (decoded.kind === 'join') handler.onJoin(channel, decoded.info);
    else handler.onLeave(channel, decoded.info);
  }

  private assertOpen(): void {
    if (this.state === 'closed') throw new BrokerError('broker_closed', 'the broker is closed');
  }
}

export interface RedisPresenceManagerOptions {
  url: string;
  /** Must match the brokers' prefix only by convention; presence keys live under `<prefix>.presence.`. */
  prefix?: string;
  /** Connection errors; calls fail at once with `broker_unavailable` meanwhile. Default: ignored. */
  onError?: (error: Error) => void;
  /** A Redis command that takes longer fails with `broker_unavailable` (and drops its connection). Default 1000 ms. */
  commandTimeoutMs?: number;
  /** The connection is PINGed this often while idle, so a Redis that stopped answering is noticed. Default 1000 ms. */
  keepAliveMs?: number;
}

/**
 * Presence as a HASH (client → info) plus a ZSET (client → expiry), maintained by Lua
 * (docs/protocol.md "Redis broker layout").
 */
export class RedisPresenceManager implements PresenceManager {
  private readonly keys: RedisKeys;
  private readonly redis: Redis;
  /** Settles after the first connection attempt; calls made before it wait for it instead of failing. */
  private readonly firstConnection: Promise<void>;
  private readonly stopKeepAlive: () => void;
  private closed = false;

  constructor(options: RedisPresenceManagerOptions) {
    this.keys = new RedisKeys(options.prefix ?? DEFAULT_PREFIX);
    this.redis = new OutageAwareRedis(
      options.url,
      { enableAutoPipelining: true },
      options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    );
    this.redis.on('error', options.onError ?? (() => {}));
    this.stopKeepAlive = keepAlive(this.redis, options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS);
    // Connected from the start (there is no `run`), so `healthy()` is true as soon as Redis answers. A failed
    // first attempt is reported through 'error' and retried by ioredis.
    this.firstConnection = this.redis.connect().catch(() => undefined);
  }

  healthy(): boolean {
    return !this.closed && this.redis.status === 'ready';
  }

  async addPresence(channel: string, clientId: string, info: ClientInfo, ttlMs: number): Promise<void> {
    const now = Date.now();
    await this.run(PRESENCE_ADD, channel, [clientId, JSON.stringify(info), now + ttlMs, ttlMs]);
  }

  async removePresence(channel: string, clientId: string, _user: string): Promise<void> {
    await this.run(PRESENCE_REMOVE, channel, [clientId]);
  }

  async presence(channel: string): Promise<Record<string, ClientInfo>> {
    const flat = (await this.run(PRESENCE_GET, channel, [Date.now()])) as string[];
    const result: Record<string, ClientInfo> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) result[flat[i]!] = JSON.parse(flat[i + 1]!) as ClientInfo;
    return result;
  }

  async presenceStats(channel: string): Promise<PresenceStats> {
    const [numClients, numUsers] = (await this.run(PRESENCE_STATS, channel, [Date.now()])) as [
      number,
      number,
    ];
    return { numClients, numUsers };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopKeepAlive();
    await quit(this.redis);
  }

  private async run(
    script: typeof PRESENCE_ADD,
    channel: string,
    args: (string | number)[],
  ): Promise<unknown> {
    if (this.closed) throw new BrokerError('broker_closed', 'the presence manager is closed');
    await this.firstConnection;
    try {
      assertConnected(this.redis);
      return await runScript(
        this.redis,
        script,
        [this.keys.presenceData(channel), this.keys.presenceExpiry(channel)],
        args,
      );
    } catch (error) {
      throw unavailable(error);
    }
  }
}
