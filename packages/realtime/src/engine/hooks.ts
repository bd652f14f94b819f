import type { IncomingMessage } from 'node:http';
import type { ConnectTokenClaims } from '../tokens/verifier.ts';

/** A connected client as hooks and events see it. */
export interface ClientHandle {
  /** Unique connection id (`client` in the connect result and in ClientInfo). */
  readonly id: string;
  /** User id; "" for anonymous connections. */
  readonly user: string;
  /** `conn_info` as raw JSON text, if any. */
  readonly connInfo: string | undefined;
  /** Server-only metadata: the connection token's `meta` claim or what `onConnecting` returned. */
  readonly meta: unknown;
  /** Free per-connection storage for the application (set in `onConnecting`, read in later hooks). */
  readonly storage: Record<string, unknown>;
  /** SDK name and application version the client sent in `connect` (observability only). */
  readonly clientName: string;
  readonly clientVersion: string;
  /** Channels this client is subscribed to on this node. */
  channels(): string[];
  /** Closes the connection with a close code (default 3503 "force disconnect"). */
  disconnect(code?: number, reason?: string): void;
  /** Ends one subscription with an unsubscribe push (default 2000 "server unsubscribe"). */
  unsubscribe(channel: string, code?: number, reason?: string): void;
  /** Sends an asynchronous `message` push with this JSON data. */
  send(data: unknown): void;
}

export interface ConnectingContext {
  clientId: string;
  /** The HTTP upgrade request (headers, cookies, remote address). Do not keep it. */
  request: IncomingMessage;
  origin: string | undefined;
  /** Verified connection token claims, when the client sent a token. */
  token: ConnectTokenClaims | undefined;
  /** The `data` of the connect command, parsed. */
  data: unknown;
  clientName: string;
  clientVersion: string;
}

/** What `onConnecting` may decide; every field is optional. */
export interface ConnectingResult {
  /**
   * The user id. Required to admit a connection that came without a token (like Centrifugo's connect proxy);
   * overrides the token's `sub` otherwise.
   */
  user?: string;
  /** JSON value that becomes `conn_info`. */
  info?: unknown;
  /** Connection expiry, unix seconds; 0 = never. */
  expireAt?: number;
  meta?: unknown;
  /** JSON value returned to the client as the connect result `data` (`connected` event `ctx.data`). */
  data?: unknown;
  /** Extra server-side subscriptions for this connection. */
  channels?: string[];
  /** Initial value of `client.storage`. */
  storage?: Record<string, unknown>;
}

export interface PublishContext {
  client: ClientHandle;
  channel: string;
  /** The publication data the client sent, parsed. */
  data: unknown;
}

/** What `onPublish` may decide. Throw a `ClientError` (400–1999) to reject, a `DisconnectError` to drop. */
export interface PublishDecision {
  /** Replaces the data that is broadcast (Centrifugo publish proxy `data`). */
  data?: unknown;
  /** Acknowledge the publish without broadcasting anything. */
  skip?: boolean;
  /** Broadcast without adding to channel history. */
  skipHistory?: boolean;
  tags?: Record<string, string>;
  /** Same key within the idempotency window → published once. */
  idempotencyKey?: string;
}

export interface SubscribingContext {
  client: ClientHandle;
  channel: string;
  /** The client asked to recover from a stream position (a resubscribe after a reconnect). */
  recovering: boolean;
}

/** What `onSubscribing` may add to an accepted subscription. */
export interface SubscribingResult {
  /**
   * JSON value returned as the subscribe result `data` (`subscribed` event `ctx.data`; Centrifugo's subscribe
   * proxy `data`), instead of the subscription token's `data` claim.
   */
  data?: unknown;
}

export interface RpcContext {
  client: ClientHandle;
  method: string;
  data: unknown;
}

export interface MessageContext {
  client: ClientHandle;
  data: unknown;
}

export interface DisconnectInfo {
  code: number;
  reason: string;
}

/**
 * Application hooks. Decision hooks may be async and may throw `ClientError` / `DisconnectError`; event hooks
 * (`onConnect`, `onDisconnect`, `onSubscribe`, `onUnsubscribe`, `onBrokerRestored`) are for observability and
 * follow-up work, their errors are logged.
 */
export interface RealtimeHooks {
  /** Decides whether a WebSocket upgrade from this Origin is accepted (replaces `allowedOrigins` when set). */
  checkOrigin?(origin: string | undefined, request: IncomingMessage): boolean | Promise<boolean>;
  /** Runs after token verification and before the connect reply; may reject or add data. */
  onConnecting?(
    context: ConnectingContext,
  ): ConnectingResult | undefined | Promise<ConnectingResult | undefined>;
  /**
   * Runs for every client-side subscription once it is authorized and registered, before the reply is written:
   * publications from that moment on are buffered and delivered after the reply, so state the hook reads here
   * and the live stream that follows leave no gap. May add subscribe result `data`; may throw `ClientError`.
   */
  onSubscribing?(
    context: SubscribingContext,
  ): SubscribingResult | undefined | Promise<SubscribingResult | undefined>;
  /** Validates or transforms a client publication; nothing is broadcast before it resolves. */
  onPublish?(context: PublishContext): PublishDecision | undefined | Promise<PublishDecision | undefined>;
  /** Answers client RPC; the return value is the reply `data`. Without it RPC answers 108. */
  onRpc?(context: RpcContext): unknown;
  /** Receives asynchronous `send` messages. Without it a `send` closes the connection with 3508. */
  onMessage?(context: MessageContext): void | Promise<void>;
  onConnect?(client: ClientHandle): void;
  onDisconnect?(client: ClientHandle, info: DisconnectInfo): void;
  onSubscribe?(client: ClientHandle, channel: string): void;
  onUnsubscribe?(client: ClientHandle, channel: string, info: DisconnectInfo): void;
  /**
   * The broker is healthy again after it lost its connection (a Redis outage or partition). Publishes that failed
   * meanwhile can be made again now; subscribers that missed publications are being told to recover (2500).
   */
  onBrokerRestored?(): void;
}
