import type { Broker, PresenceManager } from '../broker/types.ts';
import { ConfigError } from '../config/errors.ts';
import { ProxyDirectory, type ProxyOptions } from '../proxy/options.ts';
import type { TokenOptions } from '../tokens/verifier.ts';
import type { RealtimeHooks } from './hooks.ts';
import { createJsonLogger, type Logger } from './logger.ts';
import {
  type ChannelOptions,
  type ChannelRules,
  DEFAULT_CHANNEL_RULES,
  type NamespaceConfig,
} from './namespaces.ts';
import type { RealtimeObserver } from './observer.ts';

/** Per-connection command rate limit (token bucket); over the limit → 111, far over → close 3013. */
export interface CommandRateLimit {
  /** Sustained commands per second. */
  perSecond: number;
  /** Bucket size: how many commands may arrive at once. */
  burst: number;
}

/**
 * Options of `createRealtimeEngine`. Times are milliseconds; defaults are Centrifugo's (CFGO `types.go`).
 */
export interface RealtimeEngineOptions {
  /** PUB/SUB + history. Default: a new `MemoryBroker` (single node). */
  broker?: Broker;
  /** Presence storage. Default: a new `MemoryPresenceManager`. */
  presenceManager?: PresenceManager;
  /** Close the broker and presence manager in `close()`; default: only those the engine created itself. */
  closeBroker?: boolean;
  /** Connection and subscription JWT verification. */
  token?: TokenOptions;
  /** Channel namespaces (Centrifugo `channel.namespaces`). */
  namespaces?: NamespaceConfig[];
  /** Options of channels without a namespace (Centrifugo `channel.without_namespace`). */
  withoutNamespace?: ChannelOptions;
  /** Channel name rules: `maxLength` (255), `privatePrefix` ("$"), boundaries, default `historyMetaTtlMs`. */
  channelRules?: Partial<ChannelRules>;
  /**
   * Origins allowed to open a WebSocket (`*` wildcards allowed, e.g. `https://*.example.com`, or `*` for all).
   * Empty (default): only same-origin requests and clients that send no Origin header.
   */
  allowedOrigins?: string[];
  /**
   * Development only: accept connections without a token, allow every subscribe/publish/history/presence and
   * ignore token expiry (Centrifugo `client.insecure`). Logged loudly.
   */
  insecure?: boolean;
  /** Admit connections without a token as anonymous users (Centrifugo `allow_anonymous_connect_without_token`). */
  allowAnonymousConnectWithoutToken?: boolean;
  /** Refuse connection tokens with an empty `sub` (close 3507). */
  disallowAnonymousConnectionTokens?: boolean;
  /** Server ping interval (25 s); whole seconds on the wire. 0 disables pings. */
  pingIntervalMs?: number;
  /** Time to wait for a pong (8 s) before closing with 3012; 0 disables the check. */
  pongTimeoutMs?: number;
  /** Time to send `connect` (10 s) before closing with 3502. */
  staleCloseDelayMs?: number;
  /** Grace after connection expiry (25 s) before closing with 3005. */
  expiredCloseDelayMs?: number;
  /** Grace after subscription expiry (25 s) before unsubscribing with 2501. */
  expiredSubCloseDelayMs?: number;
  /** How often presence entries are refreshed (27 s). */
  presenceUpdateIntervalMs?: number;
  /** Presence entry lifetime without refresh (60 s). */
  presenceTtlMs?: number;
  /** Quiet time after which positioned subscriptions are checked against the stream top (40 s). */
  channelPositionCheckDelayMs?: number;
  /** Largest accepted WebSocket message (65536); bigger → close 1009. */
  maxFrameBytes?: number;
  /** Channels per connection (128) → 106. */
  channelLimit?: number;
  /** Command rate limit per connection; default 100/s with a burst of 200; `false` disables it. */
  commandRate?: CommandRateLimit | false;
  /** Outgoing bytes a connection may have buffered (1 MiB, Centrifugo `queue_max_size`) before 3008 "slow". */
  maxBufferedBytes?: number;
  /** Connections per user on this node; 0 = unlimited. Over → close 3504. */
  userConnectionLimit?: number;
  /** Connections on this node; 0 = unlimited. Over → close 3504 (Centrifugo `client.connection_limit`). */
  connectionLimit?: number;
  /** Cap on history publications per client request (300). */
  historyMaxPublicationLimit?: number;
  /** Cap on publications recovered on subscribe (300). */
  recoveryMaxPublicationLimit?: number;
  /** WebSocket path for `attach` and `handleUpgrade` checks (`/connection/websocket`). */
  websocketPath?: string;
  /**
   * Bidirectional emulation (docs/protocol.md "Bidirectional emulation"): serve HTTP-streaming connections on
   * `httpStreamPath` (`/connection/http_stream`); default true. The host routes requests to `engine.httpHandler`.
   */
  httpStream?: boolean;
  httpStreamPath?: string;
  /** Serve SSE connections on `ssePath` (`/connection/sse`); default true. */
  sse?: boolean;
  ssePath?: string;
  /** Where emulation clients POST their commands (`/emulation`). */
  emulationPath?: string;
  /** Largest body of a connection request or an `/emulation` request (65536, as Centrifugo); bigger → 413. */
  emulationMaxRequestBytes?: number;
  /** Told about commands and frames as they pass, for metrics (engine/observer.ts); none by default. */
  observer?: RealtimeObserver;
  /** Server API key (`X-API-Key` or `Authorization: apikey <key>`). Without it the API answers 401. */
  apiKey?: string;
  /** Serve the server API without a key (Centrifugo `http_api.insecure`); trusted networks only. */
  apiInsecure?: boolean;
  /**
   * Answer every server API error with an HTTP status (Centrifugo `http_api.error_mode: "transport"`), as the
   * `X-Centrifugo-Error-Mode: transport` header does per request.
   */
  apiTransportErrorMode?: boolean;
  /** Server API path prefix (`/api`). */
  apiPrefix?: string;
  /** Largest accepted API request body (10 MiB). */
  apiMaxBodyBytes?: number;
  /** Node name shown by `/api/info` (default: hostname + pid). */
  nodeName?: string;
  /** Server version sent in the connect result and `/api/info`. */
  serverVersion?: string;
  /** How often nodes announce themselves to each other (3 s). */
  nodeHeartbeatIntervalMs?: number;
  /** How long `/api/channels` and `/api/info` wait for other nodes (2 s). */
  surveyTimeoutMs?: number;
  /** Resolution of the shared timer wheel (100 ms); smaller means more precise timeouts. */
  timerResolutionMs?: number;
  hooks?: RealtimeHooks;
  /**
   * HTTP proxies to the application's backend (Centrifugo v6 `client.proxy`, `channel.proxy`, `proxies`, `rpc`):
   * docs/protocol.md "Proxies". A hook set in `hooks` takes precedence over the proxy of the same decision.
   */
  proxy?: ProxyOptions;
  logger?: Logger;
}

export interface ResolvedEngineOptions {
  token: TokenOptions;
  namespaces: NamespaceConfig[];
  withoutNamespace: ChannelOptions;
  channelRules: ChannelRules;
  allowedOrigins: string[];
  insecure: boolean;
  allowAnonymousConnectWithoutToken: boolean;
  disallowAnonymousConnectionTokens: boolean;
  pingIntervalMs: number;
  pongTimeoutMs: number;
  staleCloseDelayMs: number;
  expiredCloseDelayMs: number;
  expiredSubCloseDelayMs: number;
  presenceUpdateIntervalMs: number;
  presenceTtlMs: number;
  channelPositionCheckDelayMs: number;
  maxFrameBytes: number;
  channelLimit: number;
  commandRate: CommandRateLimit | false;
  maxBufferedBytes: number;
  userConnectionLimit: number;
  connectionLimit: number;
  historyMaxPublicationLimit: number;
  recoveryMaxPublicationLimit: number;
  websocketPath: string;
  httpStream: boolean;
  httpStreamPath: string;
  sse: boolean;
  ssePath: string;
  emulationPath: string;
  emulationMaxRequestBytes: number;
  apiKey: string | undefined;
  apiInsecure: boolean;
  apiTransportErrorMode: boolean;
  apiPrefix: string;
  apiMaxBodyBytes: number;
  nodeName: string | undefined;
  serverVersion: string;
  nodeHeartbeatIntervalMs: number;
  surveyTimeoutMs: number;
  timerResolutionMs: number;
  hooks: RealtimeHooks;
  proxies: ProxyDirectory;
  logger: Logger;
  observer: RealtimeObserver | undefined;
}

function nonNegative(name: string, value: number | undefined, fallback: number): number {
  const result = value ?? fallback;
  if (typeof result !== 'number' || !Number.isFinite(result) || result < 0) {
    throw new ConfigError(`${name} must be a non-negative number`);
  }
  return result;
}

function positive(name: string, value: number | undefined, fallback: number): number {
  const result = nonNegative(name, value, fallback);
  if (result === 0) throw new ConfigError(`${name} must be positive`);
  return result;
}

export function resolveEngineOptions(options: RealtimeEngineOptions): ResolvedEngineOptions {
  const pingIntervalMs = nonNegative('pingIntervalMs', options.pingIntervalMs, 25_000);
  const pongTimeoutMs = nonNegative('pongTimeoutMs', options.pongTimeoutMs, 8_000);
  if (pingIntervalMs > 0 && pingIntervalMs < 1000) {
    throw new ConfigError('pingIntervalMs must be at least 1000 (the protocol sends whole seconds)');
  }
  // The pong check must finish before the next ping (Centrifugo rule, docs/protocol.md "Ping and pong").
  if (pingIntervalMs > 0 && pongTimeoutMs >= pingIntervalMs) {
    throw new ConfigError('pongTimeoutMs must be smaller than pingIntervalMs');
  }
  const commandRate = options.commandRate ?? { perSecond: 100, burst: 200 };
  if (commandRate !== false && (!(commandRate.perSecond > 0) || !(commandRate.burst >= 1))) {
    throw new ConfigError('commandRate needs perSecond > 0 and burst >= 1');
  }
  return {
    token: options.token ?? {},
    namespaces: options.namespaces ?? [],
    withoutNamespace: options.withoutNamespace ?? {},
    channelRules: { ...DEFAULT_CHANNEL_RULES, ...options.channelRules },
    allowedOrigins: options.allowedOrigins ?? [],
    insecure: options.insecure === true,
    allowAnonymousConnectWithoutToken: options.allowAnonymousConnectWithoutToken === true,
    disallowAnonymousConnectionTokens: options.disallowAnonymousConnectionTokens === true,
    pingIntervalMs,
    pongTimeoutMs,
    staleCloseDelayMs: positive('staleCloseDelayMs', options.staleCloseDelayMs, 10_000),
    expiredCloseDelayMs: nonNegative('expiredCloseDelayMs', options.expiredCloseDelayMs, 25_000),
    expiredSubCloseDelayMs: nonNegative('expiredSubCloseDelayMs', options.expiredSubCloseDelayMs, 25_000),
    presenceUpdateIntervalMs: positive('presenceUpdateIntervalMs', options.presenceUpdateIntervalMs, 27_000),
    presenceTtlMs: positive('presenceTtlMs', options.presenceTtlMs, 60_000),
    channelPositionCheckDelayMs: positive(
      'channelPositionCheckDelayMs',
      options.channelPositionCheckDelayMs,
      40_000,
    ),
    maxFrameBytes: positive('maxFrameBytes', options.maxFrameBytes, 65_536),
    channelLimit: positive('channelLimit', options.channelLimit, 128),
    commandRate,
    maxBufferedBytes: positive('maxBufferedBytes', options.maxBufferedBytes, 1_048_576),
    userConnectionLimit: nonNegative('userConnectionLimit', options.userConnectionLimit, 0),
    connectionLimit: nonNegative('connectionLimit', options.connectionLimit, 0),
    historyMaxPublicationLimit: positive(
      'historyMaxPublicationLimit',
      options.historyMaxPublicationLimit,
      300,
    ),
    recoveryMaxPublicationLimit: positive(
      'recoveryMaxPublicationLimit',
      options.recoveryMaxPublicationLimit,
      300,
    ),
    websocketPath: options.websocketPath ?? '/connection/websocket',
    httpStream: options.httpStream ?? true,
    httpStreamPath: options.httpStreamPath ?? '/connection/http_stream',
    sse: options.sse ?? true,
    ssePath: options.ssePath ?? '/connection/sse',
    emulationPath: options.emulationPath ?? '/emulation',
    emulationMaxRequestBytes: positive('emulationMaxRequestBytes', options.emulationMaxRequestBytes, 65_536),
    apiKey: options.apiKey || undefined,
    apiInsecure: options.apiInsecure === true,
    apiTransportErrorMode: options.apiTransportErrorMode === true,
    apiPrefix: (options.apiPrefix ?? '/api').replace(/\/+$/, ''),
    apiMaxBodyBytes: positive('apiMaxBodyBytes', options.apiMaxBodyBytes, 10 * 1024 * 1024),
    nodeName: options.nodeName,
    serverVersion: options.serverVersion ?? '0.1.0',
    nodeHeartbeatIntervalMs: positive('nodeHeartbeatIntervalMs', options.nodeHeartbeatIntervalMs, 3_000),
    surveyTimeoutMs: positive('surveyTimeoutMs', options.surveyTimeoutMs, 2_000),
    timerResolutionMs: positive('timerResolutionMs', options.timerResolutionMs, 100),
    hooks: options.hooks ?? {},
    proxies: new ProxyDirectory(options.proxy),
    logger: options.logger ?? createJsonLogger('warn'),
    observer: options.observer,
  };
}
