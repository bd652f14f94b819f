import { DEFAULT_IDEMPOTENCY_TTL_MS, reportHandlerErrorAsWarning } from './defaults.ts';
import { BrokerError } from './errors.ts';
import { MemoryHub, type MemoryNode } from './memory-hub.ts';
import type {
  Broker,
  BrokerEventHandler,
  ClientInfo,
  HistoryRequest,
  HistoryResult,
  PresenceManager,
  PresenceStats,
  Publication,
  PublishRequest,
  StreamPosition,
} from './types.ts';

export { MemoryHub, type MemoryHubOptions } from './memory-hub.ts';

export interface MemoryBrokerOptions {
  /** Share one hub between brokers to run several nodes in one process; default: a private hub (one node). */
  hub?: MemoryHub;
  /**
   * Receives exceptions thrown by the event handler during synchronous delivery, so one failing node cannot make
   * a publish that was already stored look failed. Default: `process.emitWarning`.
   */
  onHandlerError?: (error: unknown) => void;
}

const NOT_RUNNING: BrokerEventHandler = {
  onPublication() {},
  onJoin() {},
  onLeave() {},
  onControl() {},
};

/**
 * Single-process broker (Centrifugo's memory engine): history in memory, events delivered synchronously, before
 * `publish` resolves, to every node of the hub subscribed to the channel.
 */
export class MemoryBroker implements Broker, MemoryNode {
  readonly hub: MemoryHub;
  eventHandler: BrokerEventHandler = NOT_RUNNING;
  private readonly channels = new Set<string>();
  private readonly onHandlerError: (error: unknown) => void;
  private state: 'new' | 'running' | 'closed' = 'new';

  constructor(options: MemoryBrokerOptions = {}) {
    this.hub = options.hub ?? new MemoryHub();
    this.onHandlerError = options.onHandlerError ?? reportHandlerErrorAsWarning;
  }

  isSubscribed(channel: string): boolean {
    return this.channels.has(channel);
  }

  async run(handler: BrokerEventHandler): Promise<void> {
    this.assertOpen();
    if (this.state === 'running') return;
    this.eventHandler = handler;
    this.state = 'running';
    this.hub.retain();
    this.hub.attach(this);
  }

  async subscribe(channels: string[]): Promise<void> {
    this.assertOpen();
    for (const channel of channels) this.channels.add(channel);
  }

  async unsubscribe(channels: string[]): Promise<void> {
    this.assertOpen();
    for (const channel of channels) this.channels.delete(channel);
  }

  async publish(request: PublishRequest): Promise<StreamPosition | undefined> {
    this.assertOpen();
    const now = Date.now();
    const idempotencyKey =
      request.idempotencyKey === undefined ? undefined : `${request.channel}\u0000${request.idempotencyKey}`;
    if (idempotencyKey !== undefined) {
      const previous = this.hub.idempotentResult(idempotencyKey, now);
      if (previous !== undefined) return previous.position;
    }
    const publication: Publication = { data: request.data, time: now };
    if (request.info !== undefined) publication.info = request.info;
    if (request.tags !== undefined) publication.tags = request.tags;
    if (request.delta === true) publication.delta = true;
    let position: StreamPosition | undefined;
    if (request.history !== undefined) {
      const stream = this.hub.streams.open(request.channel, now);
      stream.append(publication, request.history, now);
      position = stream.position;
    }
    if (idempotencyKey !== undefined) {
      const ttl = request.idempotencyTtlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS;
      this.hub.saveIdempotentResult(idempotencyKey, position, now + ttl);
    }
    const epoch = position?.epoch;
    this.deliver(request.channel, (handler) => handler.onPublication(request.channel, publication, epoch));
    return position;
  }

  async publishJoin(channel: string, info: ClientInfo): Promise<void> {
    this.assertOpen();
    this.deliver(channel, (handler) => handler.onJoin(channel, info));
  }

  async publishLeave(channel: string, info: ClientInfo): Promise<void> {
    this.assertOpen();
    this.deliver(channel, (handler) => handler.onLeave(channel, info));
  }

  async publishControl(message: string): Promise<void> {
    this.assertOpen();
    this.deliver(undefined, (handler) => handler.onControl(message));
  }

  async history(request: HistoryRequest): Promise<HistoryResult> {
    this.assertOpen();
    const now = Date.now();
    const stream = this.hub.streams.open(request.channel, now);
    // Reads keep the meta alive too, as the Redis history script does (docs/protocol.md "Streams").
    stream.touchMeta(request.history, now);
    return { publications: stream.read(request), position: stream.position };
  }

  async removeHistory(channel: string): Promise<void> {
    this.assertOpen();
    this.hub.streams.clear(channel);
  }

  /** In-process: nothing can be unreachable; only a closed broker is not healthy. */
  healthy(): boolean {
    return this.state !== 'closed';
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    if (this.state === 'running') {
      this.hub.detach(this);
      this.hub.release();
    }
    this.state = 'closed';
    this.channels.clear();
    this.eventHandler = NOT_RUNNING;
  }

  private deliver(channel: string | undefined, event: (handler: BrokerEventHandler) => void): void {
    for (const error of this.hub.forEachNode(channel, event)) this.onHandlerError(error);
  }

  private assertOpen(): void {
    if (this.state === 'closed') throw new BrokerError('broker_closed', 'the broker is closed');
  }
}

export interface MemoryPresenceManagerOptions {
  /** Share the hub of the brokers that form one in-process cluster; default: a private hub. */
  hub?: MemoryHub;
}

/** Presence kept in process memory; entries expire `ttlMs` after their last `addPresence`. */
export class MemoryPresenceManager implements PresenceManager {
  readonly hub: MemoryHub;
  private closed = false;

  constructor(options: MemoryPresenceManagerOptions = {}) {
    this.hub = options.hub ?? new MemoryHub();
    this.hub.retain();
  }

  async addPresence(channel: string, clientId: string, info: ClientInfo, ttlMs: number): Promise<void> {
    this.assertOpen();
    this.hub.addPresence(channel, clientId, info, Date.now() + ttlMs);
  }

  async removePresence(channel: string, clientId: string, _user: string): Promise<void> {
    this.assertOpen();
    this.hub.removePresence(channel, clientId);
  }

  async presence(channel: string): Promise<Record<string, ClientInfo>> {
    this.assertOpen();
    return Object.fromEntries(this.hub.presenceOf(channel, Date.now()));
  }

  async presenceStats(channel: string): Promise<PresenceStats> {
    this.assertOpen();
    return this.hub.presenceStats(channel, Date.now());
  }

  healthy(): boolean {
    return !this.closed;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.hub.release();
  }

  private assertOpen(): void {
    if (this.closed) throw new BrokerError('broker_closed', 'the presence manager is closed');
  }
}
