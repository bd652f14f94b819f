import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { hostname } from 'node:os';
import type { Duplex } from 'node:stream';
import { MemoryBroker, MemoryPresenceManager } from '../broker/memory.ts';
import type {
  Broker,
  BrokerEventHandler,
  ClientInfo,
  HistoryResult,
  PresenceManager,
  StreamPosition,
} from '../broker/types.ts';
import {
  ChannelRegistry,
  isValidPublicationData,
  type ResolvedChannelOptions,
} from '../config/namespaces.ts';
import {
  type RealtimeEngineOptions,
  type ResolvedEngineOptions,
  resolveEngineOptions,
} from '../config/options.ts';
import { handleApiRequest } from '../http-api/handler.ts';
import {
  DisconnectCode,
  disconnectReason,
  ErrorCode,
  UnsubscribeCode,
  unsubscribeReason,
} from '../protocol/codes.ts';
import { ClientError } from '../protocol/errors.ts';
import { TokenVerifier } from '../tokens/verifier.ts';
import { Cluster } from './cluster.ts';
import type { NodeInfo } from './control.ts';
import type { DisconnectInfo, RealtimeHooks } from './hooks.ts';
import { Hub } from './hub.ts';
import type { Logger } from './logger.ts';
import { OutputScheduler } from './output.ts';
import { PositionChecker } from './position-check.ts';
import type { ClientSession } from './session.ts';
import { type Subscription, SubscriptionState } from './subscription.ts';
import { TimerWheel } from './timer-wheel.ts';
import { WebSocketAcceptor } from './websocket.ts';

/** A publication as the engine API returns it: `data` parsed, ClientInfo with parsed infos. */
export interface HistoryPublication {
  data: unknown;
  offset?: number;
  info?: PresenceEntry;
  tags?: Record<string, string>;
}

export interface PresenceEntry {
  user: string;
  client: string;
  connInfo?: unknown;
  chanInfo?: unknown;
}

export interface PublishOptions {
  channel: string;
  /** JSON value to publish. */
  data?: unknown;
  /** Already-serialised JSON (used instead of `data`, avoids a parse/serialise round trip). */
  rawData?: string;
  /** Do not append to history even if the namespace keeps it. */
  skipHistory?: boolean;
  tags?: Record<string, string>;
  /** Publish at most once per key within the idempotency window (5 min). */
  idempotencyKey?: string;
  /** Publisher info attached to the publication (`pub.info`). */
  info?: ClientInfo;
}

export interface HistoryOptions {
  /** 0 (default) = only the stream position; -1 = everything retained. */
  limit?: number;
  since?: StreamPosition;
  reverse?: boolean;
}

export interface DisconnectOptions {
  /** Close code, default 3503 "force disconnect" (terminal); use 3000–3499/4000–4499 to let clients reconnect. */
  code?: number;
  reason?: string;
  /** Only this connection of the user. */
  clientId?: string;
  /** Connections of the user to keep. */
  whitelist?: string[];
}

export interface UnsubscribeOptions {
  clientId?: string;
  /** Unsubscribe code, default 2000 "server unsubscribe". */
  code?: number;
  reason?: string;
}

interface InternalPublish {
  channel: string;
  data: string;
  info?: ClientInfo;
  options: ResolvedChannelOptions;
  skipHistory: boolean;
  tags?: Record<string, string>;
  idempotencyKey?: string;
}

function parseRaw(raw: string | undefined): unknown {
  if (raw === undefined || raw === '') return undefined;
  return JSON.parse(raw);
}

function toPresenceEntry(info: ClientInfo): PresenceEntry {
  const entry: PresenceEntry = { user: info.user, client: info.client };
  if (info.connInfo) entry.connInfo = parseRaw(info.connInfo);
  if (info.chanInfo) entry.chanInfo = parseRaw(info.chanInfo);
  return entry;
}

/**
 * The realtime node: accepts WebSocket connections speaking the Centrifugo JSON protocol, routes publications
 * between the broker and local subscribers, and serves the server API. Create it with `createRealtimeEngine`.
 */
export class RealtimeEngine {
  readonly options: ResolvedEngineOptions;
  readonly registry: ChannelRegistry;
  readonly verifier: TokenVerifier;
  readonly broker: Broker;
  readonly presenceManager: PresenceManager;
  readonly hub: Hub;
  readonly wheel: TimerWheel;
  readonly output = new OutputScheduler();
  readonly logger: Logger;
  readonly hooks: RealtimeHooks;
  /** This node's id (`uid` in `/api/info`). */
  readonly nodeId = randomUUID();
  readonly nodeName: string;
  private readonly ownsBroker: boolean;
  private readonly sessions = new Set<ClientSession>();
  private readonly acceptor: WebSocketAcceptor;
  private readonly cluster: Cluster;
  private readonly positions: PositionChecker;
  private readonly intervals: NodeJS.Timeout[] = [];
  private closing: Promise<void> | undefined;
  private running = false;

  constructor(options: RealtimeEngineOptions = {}) {
    this.options = resolveEngineOptions(options);
    this.logger = this.options.logger;
    this.hooks = this.options.hooks;
    this.registry = new ChannelRegistry(
      this.options.namespaces,
      this.options.withoutNamespace,
      this.options.channelRules,
    );
    this.verifier = new TokenVerifier(this.options.token);
    this.broker = options.broker ?? new MemoryBroker();
    this.presenceManager = options.presenceManager ?? new MemoryPresenceManager();
    this.ownsBroker =
      options.closeBroker ?? (options.broker === undefined && options.presenceManager === undefined);
    this.hub = new Hub(this.broker, (error, channel) =>
      this.logger.error({ channel, error: String(error) }, 'broker subscription failed'),
    );
    this.wheel = new TimerWheel(this.options.timerResolutionMs);
    this.nodeName = this.options.nodeName ?? `${hostname()}_${process.pid}`;
    this.acceptor = new WebSocketAcceptor(this);
    this.cluster = new Cluster(this);
    this.positions = new PositionChecker(this);
  }

  /** Connects the broker and starts the timers; `createRealtimeEngine` calls it. */
  async start(): Promise<void> {
    if (this.running) return;
    if (this.options.insecure) {
      this.logger.warn(
        { insecure: true },
        'INSECURE MODE: connections without tokens are accepted and every channel permission is granted; never use in production',
      );
    }
    const handler: BrokerEventHandler = {
      onPublication: (channel, publication, epoch) =>
        this.hub.broadcastPublication(channel, publication, epoch),
      onJoin: (channel, info) => this.hub.broadcastJoinLeave(channel, info, true),
      onLeave: (channel, info) => this.hub.broadcastJoinLeave(channel, info, false),
      onControl: (message) => this.cluster.onControl(message),
    };
    await this.broker.run(handler);
    this.running = true;
    this.wheel.start();
    const every = (ms: number, task: () => void): void => {
      const timer = setInterval(task, ms);
      timer.unref();
      this.intervals.push(timer);
    };
    const checkDelay = this.options.channelPositionCheckDelayMs;
    every(
      Math.max(this.options.timerResolutionMs, Math.min(checkDelay / 2, 5_000)),
      () => void this.positions.run(),
    );
    every(this.options.nodeHeartbeatIntervalMs, () => void this.cluster.heartbeat());
    await this.cluster.heartbeat();
  }

  // ---- WebSocket ---------------------------------------------------------------------------------------------

  /**
   * Completes a WebSocket upgrade for the realtime endpoint. The host calls it from its `upgrade` listener for
   * `/connection/websocket`; the Origin is checked first (403 when refused, 503 while shutting down).
   */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.acceptor.handleUpgrade(request, socket, head);
  }

  /** Serves `/connection/websocket` (or `path`) on an existing HTTP server; other upgrade paths get 404. */
  attach(server: Server, path: string = this.options.websocketPath): void {
    this.acceptor.attach(server, path);
  }

  /** @internal Whether new connections are accepted (started and not shutting down). */
  get acceptsConnections(): boolean {
    return this.running && this.closing === undefined;
  }

  /** @internal */
  trackSession(session: ClientSession): void {
    this.sessions.add(session);
  }

  /** @internal */
  forgetSession(session: ClientSession): void {
    this.sessions.delete(session);
  }

  // ---- internals used by sessions ----------------------------------------------------------------------------

  /** @internal Removes a subscription from hub and presence and emits leave/unsubscribe events. */
  finishSubscription(sub: Subscription, info: DisconnectInfo | undefined): void {
    const wasSubscribed = sub.state === SubscriptionState.Subscribed;
    if (sub.state === SubscriptionState.Removed) return;
    sub.state = SubscriptionState.Removed;
    sub.buffer = null;
    this.hub.removeSubscription(sub);
    const session = sub.session;
    if (sub.flags.presence) {
      this.presenceManager
        .removePresence(sub.channel, session.id, session.user)
        .catch((error: unknown) =>
          this.logger.warn({ channel: sub.channel, error: String(error) }, 'presence remove failed'),
        );
    }
    if (!wasSubscribed) return;
    if (sub.flags.joinLeave) this.publishJoinLeave(sub, false);
    if (info !== undefined) this.emitEvent('onUnsubscribe', session, sub.channel, info);
  }

  /** @internal */
  addPresence(sub: Subscription): Promise<void> {
    return this.presenceManager
      .addPresence(sub.channel, sub.session.id, sub.info(), this.options.presenceTtlMs)
      .catch((error: unknown) => {
        this.logger.warn({ channel: sub.channel, error: String(error) }, 'presence update failed');
      });
  }

  /** @internal */
  publishJoinLeave(sub: Subscription, join: boolean): void {
    const operation = join
      ? this.broker.publishJoin(sub.channel, sub.info())
      : this.broker.publishLeave(sub.channel, sub.info());
    operation.catch((error: unknown) =>
      this.logger.warn({ channel: sub.channel, error: String(error) }, 'join/leave publish failed'),
    );
  }

  /** @internal */
  emitEvent<K extends 'onConnect' | 'onDisconnect' | 'onSubscribe' | 'onUnsubscribe'>(
    name: K,
    ...args: Parameters<NonNullable<RealtimeHooks[K]>>
  ): void {
    const hook = this.hooks[name] as ((...a: unknown[]) => void) | undefined;
    if (hook === undefined) return;
    try {
      hook(...args);
    } catch (error) {
      this.logger.error({ hook: name, error: String(error) }, 'event hook failed');
    }
  }

  /** @internal ClientInfo of a connection outside any channel (connection info only). */
  clientInfo(session: ClientSession): ClientInfo {
    const info: ClientInfo = { user: session.user, client: session.id };
    if (session.connInfo !== undefined) info.connInfo = session.connInfo;
    return info;
  }

  /** @internal Publishes serialised data with the namespace's history retention. */
  async publishRaw(request: InternalPublish): Promise<StreamPosition | undefined> {
    const history = request.skipHistory ? undefined : request.options.history;
    return this.broker.publish({
      channel: request.channel,
      data: request.data,
      ...(request.info !== undefined ? { info: request.info } : {}),
      ...(request.tags !== undefined ? { tags: request.tags } : {}),
      ...(history !== undefined ? { history } : {}),
      ...(request.idempotencyKey !== undefined ? { idempotencyKey: request.idempotencyKey } : {}),
    });
  }

  /** @internal History with Centrifugo's rules: reverse from offset 0 → 107, epoch mismatch → 112. */
  async readHistory(
    channel: string,
    options: ResolvedChannelOptions,
    filter: { since: StreamPosition | undefined; limit: number; reverse: boolean },
  ): Promise<HistoryResult> {
    if (options.history === undefined) throw new ClientError(ErrorCode.notAvailable);
    if (filter.reverse && filter.since !== undefined && filter.since.offset === 0) {
      throw new ClientError(ErrorCode.badRequest);
    }
    const result = await this.broker.history({
      channel,
      limit: filter.limit,
      reverse: filter.reverse,
      history: options.history,
      ...(filter.since !== undefined ? { since: filter.since } : {}),
    });
    if (
      filter.since !== undefined &&
      filter.since.epoch !== '' &&
      filter.since.epoch !== result.position.epoch
    ) {
      throw new ClientError(ErrorCode.unrecoverablePosition);
    }
    return result;
  }

  /** @internal Namespace options of a channel for server-side calls; 107 for bad names, 102 for unknown ones. */
  channelOptions(channel: unknown): ResolvedChannelOptions {
    if (typeof channel !== 'string' || channel === '') throw new ClientError(ErrorCode.badRequest);
    if (channel.length > this.registry.rules.maxLength) throw new ClientError(ErrorCode.badRequest);
    const resolved = this.registry.resolve(channel);
    if (resolved === undefined) throw new ClientError(ErrorCode.unknownChannel);
    return resolved.options;
  }

  // ---- public server API -------------------------------------------------------------------------------------

  /** Publishes to a channel on every node; resolves with the stream position when the namespace keeps history. */
  async publish(request: PublishOptions): Promise<{ offset?: number; epoch?: string }> {
    const options = this.channelOptions(request.channel);
    const data = request.rawData ?? (request.data === undefined ? '' : JSON.stringify(request.data));
    if (!isValidPublicationData(data, options.publicationDataFormat))
      throw new ClientError(ErrorCode.badRequest);
    const position = await this.publishRaw({
      channel: request.channel,
      data,
      options,
      skipHistory: request.skipHistory === true,
      ...(request.info !== undefined ? { info: request.info } : {}),
      ...(request.tags !== undefined ? { tags: request.tags } : {}),
      ...(request.idempotencyKey !== undefined ? { idempotencyKey: request.idempotencyKey } : {}),
    });
    if (position === undefined) return {};
    return { offset: position.offset, epoch: position.epoch };
  }

  /** Channel history (no client limits apply); 108 when the namespace keeps none. */
  async history(
    channel: string,
    options: HistoryOptions = {},
  ): Promise<{ publications: HistoryPublication[]; offset: number; epoch: string }> {
    const result = await this.readHistory(channel, this.channelOptions(channel), {
      since: options.since,
      limit: options.limit ?? 0,
      reverse: options.reverse === true,
    });
    return {
      publications: result.publications.map((p) => {
        const item: HistoryPublication = { data: parseRaw(p.data) };
        if (p.offset !== undefined) item.offset = p.offset;
        if (p.info !== undefined) item.info = toPresenceEntry(p.info);
        if (p.tags !== undefined) item.tags = p.tags;
        return item;
      }),
      offset: result.position.offset,
      epoch: result.position.epoch,
    };
  }

  async removeHistory(channel: string): Promise<void> {
    const options = this.channelOptions(channel);
    if (options.history === undefined) throw new ClientError(ErrorCode.notAvailable);
    await this.broker.removeHistory(channel);
  }

  /** Who is subscribed (client id → info); 108 when the namespace has no presence. */
  async presence(channel: string): Promise<Record<string, PresenceEntry>> {
    if (!this.channelOptions(channel).presence) throw new ClientError(ErrorCode.notAvailable);
    const raw = await this.presenceManager.presence(channel);
    const result: Record<string, PresenceEntry> = {};
    for (const clientId in raw) result[clientId] = toPresenceEntry(raw[clientId]!);
    return result;
  }

  async presenceStats(channel: string): Promise<{ numClients: number; numUsers: number }> {
    if (!this.channelOptions(channel).presence) throw new ClientError(ErrorCode.notAvailable);
    return this.presenceManager.presenceStats(channel);
  }

  /** Disconnects a user's connections on every node (default 3503, terminal). */
  async disconnectUser(user: string, options: DisconnectOptions = {}): Promise<void> {
    const code = options.code ?? DisconnectCode.forceNoReconnect;
    await this.cluster.publish({
      t: 'disconnect',
      from: this.nodeId,
      user,
      code,
      reason: options.reason ?? disconnectReason(code),
      ...(options.clientId ? { client: options.clientId } : {}),
      ...(options.whitelist?.length ? { whitelist: options.whitelist } : {}),
    });
  }

  /** Unsubscribes a user from a channel on every node (unsubscribe push 2000 by default). */
  async unsubscribe(user: string, channel: string, options: UnsubscribeOptions = {}): Promise<void> {
    const code = options.code ?? UnsubscribeCode.server;
    await this.cluster.publish({
      t: 'unsubscribe',
      from: this.nodeId,
      user,
      channel,
      code,
      reason: options.reason ?? unsubscribeReason(code),
      ...(options.clientId ? { client: options.clientId } : {}),
    });
  }

  /** Active channels across all nodes with their subscriber counts; `pattern` supports `*` and `?`. */
  channels(pattern?: string): Promise<Record<string, { num_clients: number }>> {
    return this.cluster.channels(pattern);
  }

  /** Nodes of the cluster as last announced by their heartbeats (this node's figures are current). */
  info(): { nodes: NodeInfo[] } {
    return { nodes: this.cluster.info() };
  }

  /** Local figures of this node. */
  stats(): { clients: number; users: number; subscriptions: number; channels: number; sockets: number } {
    return {
      clients: this.hub.numClients,
      users: this.hub.numUsers,
      subscriptions: this.hub.numSubscriptions,
      channels: this.hub.numChannels,
      sockets: this.sessions.size,
    };
  }

  /** The server HTTP API as a Node handler; resolves false when the path is not an API path. */
  readonly apiHandler = (request: IncomingMessage, response: ServerResponse): Promise<boolean> =>
    handleApiRequest(this, request, response);

  /**
   * Graceful shutdown: refuses new upgrades, closes every connection with 3001 "shutdown" (clients reconnect,
   * typically to another node), waits briefly for close handshakes, stops timers and releases owned brokers.
   */
  close(options: { code?: number; reason?: string; timeoutMs?: number } = {}): Promise<void> {
    this.closing ??= this.shutdown(options);
    return this.closing;
  }

  private async shutdown(options: { code?: number; reason?: string; timeoutMs?: number }): Promise<void> {
    const code = options.code ?? DisconnectCode.shutdown;
    for (const session of [...this.sessions]) session.disconnect(code, options.reason);
    await this.waitForSockets(options.timeoutMs ?? 2_000);
    for (const session of this.sessions) session.ws.terminate();
    this.sessions.clear();
    for (const timer of this.intervals) clearInterval(timer);
    this.intervals.length = 0;
    this.wheel.stop();
    if (this.running) await this.cluster.leave();
    this.running = false;
    if (this.ownsBroker) {
      await Promise.allSettled([this.broker.close(), this.presenceManager.close()]);
    }
  }

  private async waitForSockets(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.sessions.size > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
