/**
 * @parley/realtime — a Centrifugo-compatible realtime engine (JSON client protocol over WebSocket) with memory and
 * Redis brokers and a Centrifugo-style server HTTP API. See README.md for the option reference.
 */

import { RealtimeEngine } from './engine/engine.ts';
import type { RealtimeEngineOptions } from './engine/options.ts';

/** Creates and starts an engine (the broker is connected when the promise resolves). */
export async function createRealtimeEngine(options: RealtimeEngineOptions = {}): Promise<RealtimeEngine> {
  const engine = new RealtimeEngine(options);
  await engine.start();
  return engine;
}

export * from './broker/index.ts';
export type { DurationInput } from './config/duration.ts';
export { parseGoDuration } from './config/duration.ts';
export { ConfigError } from './config/errors.ts';
export type {
  HistoryOptions,
  HistoryPublication,
  PresenceEntry,
  PublishOptions,
} from './engine/channel-api.ts';
export type { DisconnectOptions, TargetOptions, UnsubscribeOptions } from './engine/cluster.ts';
export type { NodeInfo } from './engine/control.ts';
export { RealtimeEngine } from './engine/engine.ts';
export type {
  ClientHandle,
  ConnectingContext,
  ConnectingResult,
  DisconnectInfo,
  MessageContext,
  PublishContext,
  PublishDecision,
  RealtimeHooks,
  RpcContext,
  SubscribingContext,
  SubscribingResult,
} from './engine/hooks.ts';
export { createJsonLogger, type Logger, silentLogger } from './engine/logger.ts';
export type { ChannelOptions, ChannelRules, NamespaceConfig } from './engine/namespaces.ts';
export type { RealtimeObserver, SentFrameType } from './engine/observer.ts';
export type { CommandRateLimit, RealtimeEngineOptions } from './engine/options.ts';
export type { ServerRefreshRequest, ServerSubscribeRequest } from './engine/server-side.ts';
export type { RealtimeTransport } from './engine/transport.ts';
export { COMMAND_METHODS, type CommandMethod } from './protocol/codec.ts';
export {
  CLOSE_MESSAGE_TOO_BIG,
  DisconnectCode,
  ErrorCode,
  isTerminalDisconnect,
  JSON_TOO_DEEP_ERROR_CODE,
  UNAVAILABLE_ERROR_CODE,
  UnsubscribeCode,
} from './protocol/codes.ts';
export { ClientError, DisconnectError } from './protocol/errors.ts';
export { exceedsJsonDepth, MAX_JSON_DEPTH } from './protocol/json-depth.ts';
export type {
  ProxyEndpointOptions,
  ProxyOptions,
  RpcProxyRouting,
  StatusToCodeTransform,
} from './proxy/options.ts';
export { loadCentrifugoConfig, type StandaloneSettings } from './standalone/config.ts';
export {
  closeOnSignals,
  runStandalone,
  type StandaloneMetrics,
  type StandaloneOverrides,
  type StandaloneServer,
} from './standalone/run.ts';
export {
  type DecodedJwt,
  type HmacAlgorithm,
  type JwtKeys,
  signHmacJwt,
  TokenError,
  verifyJwt,
} from './tokens/jwt.ts';
export type {
  ConnectTokenClaims,
  ServerSubscriptionClaim,
  SubscribeTokenClaims,
  SubscriptionOverride,
  TokenOptions,
} from './tokens/verifier.ts';
export { TokenVerifier } from './tokens/verifier.ts';
