import type { Broker, ClientInfo, HistoryResult, PresenceManager, StreamPosition } from '../broker/types.ts';
import type { TokenVerifier } from '../tokens/verifier.ts';
import type { DisconnectInfo, RealtimeHooks } from './hooks.ts';
import type { Hub } from './hub.ts';
import type { Logger } from './logger.ts';
import type { ChannelRegistry, ResolvedChannelOptions } from './namespaces.ts';
import type { ResolvedEngineOptions } from './options.ts';
import type { OutputScheduler } from './output.ts';
import type { Subscription } from './subscription.ts';
import type { TimerWheel } from './timer-wheel.ts';

/**
 * A publication from a client command, already serialised, published with its namespace's history retention.
 */
export interface ChannelPublication {
  channel: string;
  data: string;
  info?: ClientInfo;
  options: ResolvedChannelOptions;
  skipHistory: boolean;
  /** Publish for delta delivery; the namespace's `delta_publish` turns it on for every publication. */
  delta?: boolean;
  tags?: Record<string, string>;
  idempotencyKey?: string;
}

/** Which part of a stream a history read returns (`since` is exclusive; limit 0 = the position only). */
export interface HistoryFilter {
  since: StreamPosition | undefined;
  limit: number;
  reverse: boolean;
}

/** The event hooks (observability only: their errors are logged, never returned to a client). */
export type EventHookName =
  | 'onConnect'
  | 'onDisconnect'
  | 'onSubscribe'
  | 'onUnsubscribe'
  | 'onBrokerRestored';

/**
 * Everything a connection (`ClientSession`) and the client command handlers need from the engine, and nothing
 * more. `EngineCore` implements it; sessions and commands import only this type, so they never depend on the
 * engine itself and the engine can hand each session its command table (no import cycle at run time).
 */
export interface SessionHost {
  readonly options: ResolvedEngineOptions;
  /** This node's id: the `node` of an emulation session's connect result (docs/protocol.md "Bidirectional emulation"). */
  readonly nodeId: string;
  readonly hooks: RealtimeHooks;
  readonly logger: Logger;
  /** Namespace lookup and channel name rules. */
  readonly registry: ChannelRegistry;
  /** Connection and subscription JWTs. */
  readonly verifier: TokenVerifier;
  /** This node's connections by user, and channel subscriptions with their broker subscription. */
  readonly hub: Pick<
    Hub,
    'addClient' | 'removeClient' | 'userSessions' | 'addSubscription' | 'seedDeltaBase' | 'numClients'
  >;
  /** The shared deadline wheel (ping, pong, stale, expiry, presence refresh). */
  readonly wheel: Pick<TimerWheel, 'schedule' | 'cancel'>;
  /** Writes each connection's output once per event-loop turn (a lone push straight away, packages/realtime/src/engine/output.ts). */
  readonly output: Pick<OutputScheduler, 'mark' | 'claimDirectWrite' | 'turn'>;
  /** Stream reads for subscribe (position and recovery). */
  readonly broker: Pick<Broker, 'history'>;
  /** Presence queries of the `presence` and `presence_stats` commands. */
  readonly presenceManager: Pick<PresenceManager, 'presence' | 'presenceStats'>;

  /** Publishes through the broker; resolves with the stream position when the namespace keeps history. */
  publishRaw(request: ChannelPublication): Promise<StreamPosition | undefined>;
  /**
   * History with the protocol's rules: reverse from offset 0 → 107, epoch mismatch → 112, no history → 108.
   */
  readHistory(
    channel: string,
    options: ResolvedChannelOptions,
    filter: HistoryFilter,
  ): Promise<HistoryResult>;
  /** Adds or refreshes the subscriber's presence entry (failures are logged, never thrown). */
  addPresence(sub: Subscription): Promise<void>;
  /** Announces a subscriber joining or leaving to the channel (failures are logged). */
  publishJoinLeave(sub: Subscription, join: boolean): void;
  /**
   * Removes a subscription from hub and presence and emits leave / `onUnsubscribe` when it was subscribed.
   */
  finishSubscription(sub: Subscription, info: DisconnectInfo | undefined): void;
  /** Calls an event hook; a hook that throws is logged. */
  emitEvent<K extends EventHookName>(name: K, ...args: Parameters<NonNullable<RealtimeHooks[K]>>): void;
}
