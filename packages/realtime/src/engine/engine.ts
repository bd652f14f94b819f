import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { MemoryBroker, MemoryPresenceManager } from '../broker/memory.ts';
import type { Broker, BrokerEventHandler, PresenceManager } from '../broker/types.ts';
import { DisconnectCode } from '../protocol/codes.ts';
import {
  channelHistory,
  channelPresence,
  channelPresenceStats,
  type HistoryOptions,
  type HistoryPublication,
  type PresenceEntry,
  type PublishOptions,
  publishToChannel,
  removeChannelHistory,
} from './channel-api.ts';
import { Cluster, type DisconnectOptions, type TargetOptions, type UnsubscribeOptions } from './cluster.ts';
import type { NodeInfo } from './control.ts';
import { EngineCore } from './core.ts';
import { EmulationAcceptor } from './emulation.ts';
import type { RealtimeHooks } from './hooks.ts';
import { handleApiRequest } from './http-api.ts';
import { type RealtimeEngineOptions, resolveEngineOptions } from './options.ts';
import { PositionChecker } from './position-check.ts';
import type { ServerRefreshRequest, ServerSubscribeRequest } from './server-side.ts';
import { WebSocketAcceptor } from './websocket.ts';

/**
 * The realtime node: accepts WebSocket connections speaking the Centrifugo JSON protocol, routes publications
 * between the broker and local subscribers, and serves the server API. Create it with `createRealtimeEngine`.
 * Its parts share an `EngineCore` (sessions see it only as a `SessionHost`); this class is the public API and
 * the node's lifecycle.
 */
export class RealtimeEngine {
  readonly broker: Broker;
  readonly presenceManager: PresenceManager;
  /** This node's id (`uid` in `/api/info`). */
  readonly nodeId: string;
  readonly nodeName: string;
  private readonly core: EngineCore;
  private readonly ownsBroker: boolean;
  private readonly acceptor: WebSocketAcceptor;
  private readonly emulation: EmulationAcceptor;
  private readonly cluster: Cluster;
  private readonly positions: PositionChecker;
  private readonly intervals: NodeJS.Timeout[] = [];
  private closing: Promise<void> | undefined;
  private draining: Promise<void> | undefined;
  private running = false;

  constructor(options: RealtimeEngineOptions = {}) {
    const resolved = resolveEngineOptions(options);
    this.broker = options.broker ?? new MemoryBroker();
    this.presenceManager = options.presenceManager ?? new MemoryPresenceManager();
    this.ownsBroker =
      options.closeBroker ?? (options.broker === undefined && options.presenceManager === undefined);
    this.core = new EngineCore(resolved, this.broker, this.presenceManager);
    this.nodeId = this.core.nodeId;
    this.nodeName = this.core.nodeName;
    this.acceptor = new WebSocketAcceptor(this.core, () => this.acceptsConnections());
    this.cluster = new Cluster(this.core, (session, data) => this.emulation.deliverLocal(session, data));
    this.emulation = new EmulationAcceptor(
      this.core,
      this.core.nodeId,
      () => this.acceptsConnections(),
      this.cluster,
    );
    this.positions = new PositionChecker(this.core);
  }

  /**
   * Installs the application's hooks, replacing those given at construction; only before `start`. For hosts whose
   * hooks call services that are themselves built from this engine (a conversation engine publishing through it):
   * build the engine, build those services, then hand over the hooks — as Centrifuge registers its node's handlers
   * before running it.
   */
  setHooks(hooks: RealtimeHooks): void {
    if (this.running) throw new Error('hooks are installed before the engine starts');
    this.core.hooks = hooks;
  }

  /** Connects the broker and starts the timers; `createRealtimeEngine` calls it. */
  async start(): Promise<void> {
    if (this.running) return;
    const { options, logger, hub, wheel } = this.core;
    if (options.insecure) {
      logger.warn(
        { insecure: true },
        'INSECURE MODE: connections without tokens are accepted and every channel permission is granted; never use in production',
      );
    }
    const handler: BrokerEventHandler = {
      onPublication: (channel, publication, epoch) => hub.broadcastPublication(channel, publication, epoch),
      onJoin: (channel, info) => hub.broadcastJoinLeave(channel, info, true),
      onLeave: (channel, info) => hub.broadcastJoinLeave(channel, info, false),
      onControl: (message) => this.cluster.onControl(message),
      onRestored: () => this.onBrokerRestored(),
    };
    await this.broker.run(handler);
    this.running = true;
    wheel.start();
    const every = (ms: number, task: () => void): void => {
      const timer = setInterval(task, ms);
      timer.unref();
      this.intervals.push(timer);
    };
    const checkDelay = options.channelPositionCheckDelayMs;
    every(
      Math.max(options.timerResolutionMs, Math.min(checkDelay / 2, 5_000)),
      () => void this.positions.run(),
    );
    every(options.nodeHeartbeatIntervalMs, () => void this.cluster.heartbeat());
    await this.cluster.heartbeat();
  }

  /**
   * The broker is back after losing its connection (README "Redis outages"): every positioned subscriber is
   * checked against its stream at once, and told to resubscribe and recover (2500) when it missed anything, so
   * what other nodes published meanwhile reaches clients within moments; then the application hears of it
   * (`onBrokerRestored`), to publish again what failed meanwhile.
   */
  private onBrokerRestored(): void {
    this.core.logger.info({}, 'broker restored; checking subscriber positions');
    void this.positions.run({ everyChannel: true });
    this.core.emitEvent('onBrokerRestored');
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
  attach(server: Server, path: string = this.core.options.websocketPath): void {
    this.acceptor.attach(server, path);
  }

  /**
   * Serves bidirectional emulation (docs/protocol.md "Bidirectional emulation"): HTTP-streaming and SSE
   * connections and `/emulation` requests; resolves false when the path is none of them (the host then handles
   * it). Hosts that serve WebSocket through `attach` or `handleUpgrade` route plain HTTP requests here.
   */
  readonly httpHandler = (request: IncomingMessage, response: ServerResponse): Promise<boolean> =>
    this.emulation.handle(request, response);

  /** Whether new connections are accepted (started, not draining, not shutting down). */
  private acceptsConnections(): boolean {
    return this.running && this.closing === undefined && this.draining === undefined;
  }

  // ---- public server API -------------------------------------------------------------------------------------

  /** Publishes to a channel on every node; resolves with the stream position when the namespace keeps history. */
  publish(request: PublishOptions): Promise<{ offset?: number; epoch?: string }> {
    return publishToChannel(this.core, request);
  }

  /**
   * Whether a client of this node follows the channel now. Only this node's clients: with a broker shared by other
   * nodes, a channel nobody follows here may still have subscribers elsewhere.
   */
  hasLocalSubscribers(channel: string): boolean {
    return (this.core.hub.subscribers(channel)?.size ?? 0) > 0;
  }

  /** Channel history (no client limits apply); 108 when the namespace keeps none. */
  history(
    channel: string,
    options: HistoryOptions = {},
  ): Promise<{ publications: HistoryPublication[]; offset: number; epoch: string }> {
    return channelHistory(this.core, channel, options);
  }

  removeHistory(channel: string): Promise<void> {
    return removeChannelHistory(this.core, channel);
  }

  /** Who is subscribed (client id → info); 108 when the namespace has no presence. */
  presence(channel: string): Promise<Record<string, PresenceEntry>> {
    return channelPresence(this.core, channel);
  }

  presenceStats(channel: string): Promise<{ numClients: number; numUsers: number }> {
    return channelPresenceStats(this.core, channel);
  }

  /** Disconnects a user's connections on every node (default 3503, terminal). */
  disconnectUser(user: string, options: DisconnectOptions = {}): Promise<void> {
    return this.cluster.disconnectUser(user, options);
  }

  /**
   * Subscribes a user's connections on every node to a channel server-side (server API `subscribe`): each gets a
   * `subscribe` push and then the channel's publications. 102/107 for an unknown or bad channel.
   */
  async subscribeUser(
    user: string,
    request: ServerSubscribeRequest,
    options: TargetOptions = {},
  ): Promise<void> {
    this.core.channelOptions(request.channel);
    await this.cluster.subscribeUser(user, request, options);
  }

  /** Renews (or, with `expired`, ends) a user's connections on every node (server API `refresh`). */
  refreshUser(user: string, request: ServerRefreshRequest, options: TargetOptions = {}): Promise<void> {
    return this.cluster.refreshUser(user, request, options);
  }

  /** Unsubscribes a user from a channel on every node (unsubscribe push 2000 by default). */
  unsubscribe(user: string, channel: string, options: UnsubscribeOptions = {}): Promise<void> {
    return this.cluster.unsubscribe(user, channel, options);
  }

  /** Active channels across all nodes with their subscriber counts; `pattern` supports `*` and `?`. */
  channels(pattern?: string): Promise<Record<string, { num_clients: number }>> {
    return this.cluster.channels(pattern);
  }

  /** Nodes of the cluster as last announced by their heartbeats (this node's figures are current). */
  info(): { nodes: NodeInfo[] } {
    return { nodes: this.cluster.info() };
  }

  /**
   * Whether the broker and the presence manager can serve right now (for a readiness probe). While this is false,
   * commands that need them fail at once: clients get reply error 503 (temporary), `publish()` and the other server
   * methods reject with `BrokerError`. Redis connections come back by themselves.
   */
  healthy(): boolean {
    return this.running && this.broker.healthy() && this.presenceManager.healthy();
  }

  /** Local figures of this node. */
  stats(): { clients: number; users: number; subscriptions: number; channels: number; sockets: number } {
    const { hub } = this.core;
    return {
      clients: hub.numClients,
      users: hub.numUsers,
      subscriptions: hub.numSubscriptions,
      channels: hub.numChannels,
      sockets: this.acceptor.sessions.size + this.emulation.sessions.size,
    };
  }

  /** The server HTTP API as a Node handler; resolves false when the path is not an API path. */
  readonly apiHandler = (request: IncomingMessage, response: ServerResponse): Promise<boolean> =>
    handleApiRequest({ core: this.core, cluster: this.cluster }, request, response);

  /**
   * Graceful shutdown: refuses new upgrades, closes every connection with 3001 "shutdown" (clients reconnect,
   * typically to another node), waits briefly for close handshakes, stops timers and releases owned brokers.
   */
  close(options: { code?: number; reason?: string; timeoutMs?: number } = {}): Promise<void> {
    this.closing ??= this.shutdown(options);
    return this.closing;
  }

  /**
   * First half of a graceful shutdown, for a node that still has work to publish (a host finishing its streams):
   * refuses new upgrades and closes every connection with 3001 "shutdown" so clients reconnect to another node
   * (and recover from history there), while the broker, timers and server-side `publish` keep working until
   * `close`. Idempotent.
   */
  drainClients(options: { code?: number; reason?: string; timeoutMs?: number } = {}): Promise<void> {
    const code = options.code ?? DisconnectCode.shutdown;
    const timeoutMs = options.timeoutMs ?? 2_000;
    this.draining ??= Promise.all([
      this.acceptor.disconnectAll(code, options.reason, timeoutMs),
      this.emulation.disconnectAll(code, options.reason, timeoutMs),
    ]).then(() => undefined);
    return this.draining;
  }

  private async shutdown(options: { code?: number; reason?: string; timeoutMs?: number }): Promise<void> {
    await this.drainClients(options);
    for (const timer of this.intervals) clearInterval(timer);
    this.intervals.length = 0;
    this.core.wheel.stop();
    if (this.running) await this.cluster.leave();
    this.running = false;
    if (this.ownsBroker) {
      await Promise.allSettled([this.broker.close(), this.presenceManager.close()]);
    }
  }
}
