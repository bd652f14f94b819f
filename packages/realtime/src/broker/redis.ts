import { Redis } from 'ioredis';
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
  /** Connection errors (Redis down, reconnecting). Commands fail with `BrokerError` meanwhile. Default: ignored. */
  onError?: (error: Error) => void;
  /** Exceptions thrown by the event handler while a message is delivered. Default: `process.emitWarning`. */
  onHandlerError?: (error: unknown) => void;
}

const DEFAULT_PREFIX = 'parley';

/** Key and PUB/SUB channel names (protocol brief §7, with Centrifuge's layout under our prefix). */
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
 * Broker for several nodes sharing one Redis (protocol brief §7): PUB/SUB fan-out with a node-level SUBSCRIBE only
 * for channels that have local subscribers, history in Redis Streams appended by one Lua script per publish, and a
 * control channel every node listens to. PUB/SUB is at-most-once; offsets let the engine notice a loss and
 * recover from the stream (brief §5.6).
 */
export class RedisBroker implements Broker {
  private readonly keys: RedisKeys;
  private readonly commands: Redis;
  private readonly subscriber: Redis;
  private readonly channels = new Set<string>();
  private readonly batchSize: number;
  private readonly onHandlerError: (error: unknown) => void;
  private handler: BrokerEventHandler | undefined;
  private state: 'new' | 'running' | 'closed' = 'new';

  constructor(options: RedisBrokerOptions) {
    this.keys = new RedisKeys(options.prefix ?? DEFAULT_PREFIX);
    this.batchSize = options.subscribeBatchSize ?? 512;
    this.onHandlerError = options.onHandlerError ?? reportHandlerErrorAsWarning;
    const onError = options.onError ?? (() => {});
    this.commands = new Redis(options.url, { lazyConnect: true, enableAutoPipelining: true });
    // We resubscribe ourselves after a reconnect, from our own set of wanted channels (see `resubscribeAll`).
    this.subscriber = new Redis(options.url, { lazyConnect: true, autoResubscribe: false });
    this.commands.on('error', onError);
    this.subscriber.on('error', onError);
    // Registered once, here: `run` may be called again after a failed connect (or twice at once), and a second
    // listener would deliver every message twice. `dispatch` drops messages until `run` has set the handler, and
    // `resubscribeAll` does nothing until the broker runs (the first 'ready' is `run`'s own connect).
    this.subscriber.on('message', (channel: string, message: string) => this.dispatch(channel, message));
    // 'ready' fires again after every reconnect; a fresh connection has no subscriptions.
    this.subscriber.on('ready', () => this.resubscribeAll());
  }

  async run(handler: BrokerEventHandler): Promise<void> {
    this.assertOpen();
    if (this.state === 'running') return;
    this.handler = handler;
    try {
      await Promise.all([this.connect(this.commands), this.connect(this.subscriber)]);
      await this.subscriber.subscribe(this.keys.control);
    } catch (error) {
      throw unavailable(error);
    }
    this.state = 'running';
  }

  async subscribe(channels: string[]): Promise<void> {
    this.assertOpen();
    const added = channels.filter((channel) => !this.channels.has(channel));
    for (const channel of added) this.channels.add(channel);
    await this.sendInBatches('subscribe', added);
  }

  async unsubscribe(channels: string[]): Promise<void> {
    this.assertOpen();
    const removed = channels.filter((channel) => this.channels.delete(channel));
    await this.sendInBatches('unsubscribe', removed);
  }

  async publish(request: PublishRequest): Promise<StreamPosition | undefined> {
    this.assertOpen();
    const { channel } = request;
    const body = encodePublicationBody(request.data, Date.now(), request.info, request.tags);
    try {
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
    this.subscriber.removeAllListeners('ready');
    await Promise.all([quit(this.subscriber), quit(this.commands)]);
  }

  private async publishRaw(pubsubChannel: string, message: string): Promise<void> {
    this.assertOpen();
    try {
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

  private resubscribeAll(): void {
    if (this.state !== 'running') return;
    const wanted = [this.keys.control, ...[...this.channels].map((channel) => this.keys.pubsub(channel))];
    for (const batch of batches(wanted, this.batchSize)) {
      // A failure here means the connection dropped again; the next 'ready' retries the whole set.
      this.subscriber.subscribe(...batch).catch(() => {});
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

  private async connect(redis: Redis): Promise<void> {
    if (redis.status === 'wait') await redis.connect();
  }

  private assertOpen(): void {
    if (this.state === 'closed') throw new BrokerError('broker_closed', 'the broker is closed');
  }
}

async function quit(redis: Redis): Promise<void> {
  if (redis.status === 'wait' || redis.status === 'end') {
    redis.disconnect();
    return;
  }
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}

export interface RedisPresenceManagerOptions {
  url: string;
  /** Must match the brokers' prefix only by convention; presence keys live under `<prefix>.presence.`. */
  prefix?: string;
  onError?: (error: Error) => void;
}

/** Presence as a HASH (client → info) plus a ZSET (client → expiry), maintained by Lua (protocol brief §7). */
export class RedisPresenceManager implements PresenceManager {
  private readonly keys: RedisKeys;
  private readonly redis: Redis;
  private closed = false;

  constructor(options: RedisPresenceManagerOptions) {
    this.keys = new RedisKeys(options.prefix ?? DEFAULT_PREFIX);
    this.redis = new Redis(options.url, { lazyConnect: true, enableAutoPipelining: true });
    this.redis.on('error', options.onError ?? (() => {}));
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
    await quit(this.redis);
  }

  private async run(
    script: typeof PRESENCE_ADD,
    channel: string,
    args: (string | number)[],
  ): Promise<unknown> {
    if (this.closed) throw new BrokerError('broker_closed', 'the presence manager is closed');
    try {
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
