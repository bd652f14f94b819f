/**
 * The seam between the realtime engine and the machinery that moves publications between nodes and keeps
 * channel history and presence. Two implementations exist: `MemoryBroker` (single node, the default) and
 * `RedisBroker` (PUB/SUB fan-out, history in Redis Streams, presence with expiry). Both pass the same contract
 * suites in `contract/` (`*.test-suite.ts`, one per area).
 *
 * Payloads travel as raw JSON text (`data: string`) so a publication is serialised once, not once per
 * subscriber or node; the engine embeds it verbatim in the `pub` push (Centrifugo "bytes are raw JSON").
 */

/** ClientInfo as it appears on the wire (`user` and `client` are always written, even when empty). */
export interface ClientInfo {
  user: string;
  client: string;
  /** Raw JSON text from the connection token's `info` claim, if any. */
  connInfo?: string;
  /** Raw JSON text from the subscription token's `info` claim, if any. */
  chanInfo?: string;
}

/** A position in a channel's stream: the offset of the newest publication (0 when empty) and the stream epoch. */
export interface StreamPosition {
  offset: number;
  epoch: string;
}

export interface Publication {
  /** Raw JSON text. */
  data: string;
  /** Set when the channel keeps history; gapless per channel, starting at 1. */
  offset?: number;
  info?: ClientInfo;
  tags?: Record<string, string>;
  /** Unix milliseconds when the broker accepted it. */
  time?: number;
  /**
   * Published for delta delivery (Centrifugo `delta`): subscribers that negotiated fossil deltas may get it as a
   * delta against the previous publication they received (docs/protocol.md "Delta compression").
   */
  delta?: boolean;
}

/** History retention of a channel, from its namespace options (both must be > 0 to keep history). */
export interface HistoryRetention {
  /** Sliding window: keep the newest `size` publications. */
  size: number;
  /** The whole stream expires after `ttlMs` without any publish (Centrifugo semantics, not a per-item age). */
  ttlMs: number;
  /**
   * How long the epoch and top offset outlive the last publish or history read; after that a new epoch starts
   * at offset 0. 0 = never expire.
   */
  metaTtlMs: number;
}

export interface PublishRequest {
  channel: string;
  data: string;
  info?: ClientInfo;
  tags?: Record<string, string>;
  /** Deliver as a fossil delta to the subscribers that asked for it (`Publication.delta`). */
  delta?: boolean;
  /** When set, the publication is appended to the channel stream and gets an offset. */
  history?: HistoryRetention;
  /**
   * Same key within `idempotencyTtlMs` → the first result is returned and nothing is published again
   * (Centrifugo `idempotency_key`).
   */
  idempotencyKey?: string;
  idempotencyTtlMs?: number;
}

export interface HistoryRequest {
  channel: string;
  /**
   * Exclusive lower bound. With `reverse`, publications before `since.offset` newest first. Only the offset is
   * used: the broker does not compare `since.epoch` (the caller checks it against `position.epoch`), and a
   * `since` older than the window yields the oldest retained publications (the caller detects the gap).
   */
  since?: StreamPosition;
  /** 0 → position only; -1 → everything retained. */
  limit: number;
  reverse?: boolean;
  /** Retention of the channel, used to refresh meta expiry and to create the stream meta on first read. */
  history: HistoryRetention;
}

export interface HistoryResult {
  publications: Publication[];
  /** Current top of the stream (after reading). */
  position: StreamPosition;
}

/** Events a broker delivers to the engine of this node. */
export interface BrokerEventHandler {
  /**
   * A publication for a channel this node subscribed to with `subscribe`. The object may be shared with other
   * nodes of an in-process hub and with the memory history: treat it as read-only.
   */
  onPublication(channel: string, publication: Publication, epoch: string | undefined): void;
  onJoin(channel: string, info: ClientInfo): void;
  onLeave(channel: string, info: ClientInfo): void;
  /** An opaque control message published by any node (including this one) with `publishControl`. */
  onControl(message: string): void;
  /**
   * The broker is healthy again after it lost a connection (an outage, a partition): publications delivered
   * meanwhile may never have reached this node, and publishes made meanwhile failed. Brokers that never lose
   * anything (memory) never call it.
   */
  onRestored?(): void;
}

export interface Broker {
  /** Connects and starts delivering events. Called once before anything else. */
  run(handler: BrokerEventHandler): Promise<void>;
  /** Start receiving publications/join/leave for these channels on this node (first local subscriber). */
  subscribe(channels: string[]): Promise<void>;
  /** Stop receiving them (last local subscriber left). */
  unsubscribe(channels: string[]): Promise<void>;
  /** Publishes to every node. Resolves with the stream position when `history` was requested. */
  publish(request: PublishRequest): Promise<StreamPosition | undefined>;
  publishJoin(channel: string, info: ClientInfo): Promise<void>;
  publishLeave(channel: string, info: ClientInfo): Promise<void>;
  publishControl(message: string): Promise<void>;
  history(request: HistoryRequest): Promise<HistoryResult>;
  /** Drops the retained publications; the epoch and top offset stay, so offsets keep counting. */
  removeHistory(channel: string): Promise<void>;
  /**
   * Whether the broker can serve right now: running and connected, with every channel of this node subscribed
   * again after a reconnect. For readiness probes; while false, calls fail at once with `BrokerError` code
   * `broker_unavailable` rather than wait (they never hang until the connection returns).
   */
  healthy(): boolean;
  /** Idempotent; afterwards every method rejects with `BrokerError` code `broker_closed`. */
  close(): Promise<void>;
}

export interface PresenceStats {
  numClients: number;
  numUsers: number;
}

export interface PresenceManager {
  /** Adds or refreshes a client's presence; entries not refreshed within `ttlMs` disappear. */
  addPresence(channel: string, clientId: string, info: ClientInfo, ttlMs: number): Promise<void>;
  removePresence(channel: string, clientId: string, user: string): Promise<void>;
  presence(channel: string): Promise<Record<string, ClientInfo>>;
  presenceStats(channel: string): Promise<PresenceStats>;
  /** Whether presence calls can succeed right now (connected); while false they fail at once with `BrokerError`. */
  healthy(): boolean;
  close(): Promise<void>;
}
