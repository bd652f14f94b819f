import { ConfigError } from '../config/errors.ts';
import type { ChannelOptions, ChannelRules, NamespaceConfig } from '../engine/namespaces.ts';
import type { RealtimeEngineOptions } from '../engine/options.ts';
import type { TokenOptions } from '../tokens/verifier.ts';
import { assign, type Fields, type Json, type Kind, Reader } from './reader.ts';
import { readEmulation, readProxies } from './transport-config.ts';

/**
 * Loads a Centrifugo v6 JSON configuration (CFGO `internal/configtypes`) into engine options. Every key that this
 * engine does not implement is reported in `unknownKeys` (dotted paths) so nothing is silently ignored.
 */

export interface StandaloneSettings {
  /** Engine options (without broker instances; `runStandalone` creates them from `engine`). */
  options: RealtimeEngineOptions;
  engine: { type: 'memory' | 'redis'; redisUrl?: string; redisPrefix?: string };
  httpServer: { port: number; address: string };
  /** `GET /metrics` serves Prometheus metrics (Centrifugo `prometheus.enabled`; needs a host that provides them). */
  prometheus: boolean;
  /** `GET <path>` answers 200 `{}` (Centrifugo `health`); undefined when `health.enabled` is false. */
  healthPath: string | undefined;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'none';
  /** Keys present in the file that this engine does not understand or support. */
  unknownKeys: string[];
  /** Other remarks worth logging (numeric durations, ignored extra Redis shards...). */
  warnings: string[];
}

const TOKEN_FIELDS: Fields<TokenOptions> = {
  rsaPublicKey: ['rsa_public_key', 'string'],
  ecdsaPublicKey: ['ecdsa_public_key', 'string'],
  audience: ['audience', 'string'],
  issuer: ['issuer', 'string'],
  userIdClaim: ['user_id_claim', 'string'],
};

const CLIENT_FIELDS: Fields<RealtimeEngineOptions> = {
  allowedOrigins: ['allowed_origins', 'strings'],
  insecure: ['insecure', 'bool'],
  allowAnonymousConnectWithoutToken: ['allow_anonymous_connect_without_token', 'bool'],
  disallowAnonymousConnectionTokens: ['disallow_anonymous_connection_tokens', 'bool'],
  pingIntervalMs: ['ping_interval', 'durationMs'],
  pongTimeoutMs: ['pong_timeout', 'durationMs'],
  expiredCloseDelayMs: ['expired_close_delay', 'durationMs'],
  expiredSubCloseDelayMs: ['expired_sub_close_delay', 'durationMs'],
  staleCloseDelayMs: ['stale_close_delay', 'durationMs'],
  channelLimit: ['channel_limit', 'number'],
  maxBufferedBytes: ['queue_max_size', 'number'],
  presenceUpdateIntervalMs: ['presence_update_interval', 'durationMs'],
  channelPositionCheckDelayMs: ['channel_position_check_delay', 'durationMs'],
  userConnectionLimit: ['user_connection_limit', 'number'],
  connectionLimit: ['connection_limit', 'number'],
  historyMaxPublicationLimit: ['history_max_publication_limit', 'number'],
  recoveryMaxPublicationLimit: ['recovery_max_publication_limit', 'number'],
};

const CHANNEL_RULE_FIELDS: Fields<ChannelRules> = {
  maxLength: ['max_length', 'number'],
  privatePrefix: ['private_prefix', 'string'],
  namespaceBoundary: ['namespace_boundary', 'string'],
  userBoundary: ['user_boundary', 'string'],
  userSeparator: ['user_separator', 'string'],
  historyMetaTtlMs: ['history_meta_ttl', 'durationMs'],
};

const HTTP_API_FIELDS: Fields<RealtimeEngineOptions> = {
  apiKey: ['key', 'string'],
  apiInsecure: ['insecure', 'bool'],
  apiPrefix: ['handler_prefix', 'string'],
};

const WEBSOCKET_FIELDS: Fields<RealtimeEngineOptions> = {
  maxFrameBytes: ['message_size_limit', 'number'],
  websocketPath: ['handler_prefix', 'string'],
};

function keysOf<T>(fields: Fields<T>): string[] {
  return Object.values<readonly [string, Kind] | undefined>(fields).map((field) => field![0]);
}

function readClient(reader: Reader, root: Json, options: RealtimeEngineOptions): void {
  const client = reader.section(root, 'client', '');
  reader.checkKeys(client, 'client', ['token', 'proxy', ...keysOf(CLIENT_FIELDS)]);
  const token = reader.section(client, 'token', 'client');
  reader.checkKeys(token, 'client.token', [
    'hmac_secret_key',
    'hmac_previous_secret_key',
    ...keysOf(TOKEN_FIELDS),
  ]);
  const hmac = [
    reader.string(token, 'hmac_secret_key', 'client.token'),
    reader.string(token, 'hmac_previous_secret_key', 'client.token'),
  ].filter((k): k is string => k !== undefined && k !== '');
  options.token = {};
  if (hmac.length > 0) options.token.hmacSecretKeys = hmac;
  reader.fields(token, 'client.token', options.token, TOKEN_FIELDS);
  reader.fields(client, 'client', options, CLIENT_FIELDS);
  // Centrifugo uses -1 to switch pings / pong checks off; the engine uses 0.
  if (options.pingIntervalMs !== undefined) options.pingIntervalMs = Math.max(0, options.pingIntervalMs);
  if (options.pongTimeoutMs !== undefined) options.pongTimeoutMs = Math.max(0, options.pongTimeoutMs);
}

function readChannel(reader: Reader, root: Json, options: RealtimeEngineOptions): void {
  const channel = reader.section(root, 'channel', '');
  reader.checkKeys(channel, 'channel', [
    'without_namespace',
    'namespaces',
    'proxy',
    'publication_data_format',
    ...keysOf(CHANNEL_RULE_FIELDS),
  ]);
  options.withoutNamespace = reader.channelOptions(
    reader.section(channel, 'without_namespace', 'channel'),
    'channel.without_namespace',
  );
  const namespaces = channel.namespaces ?? [];
  if (!Array.isArray(namespaces)) throw new ConfigError('channel.namespaces must be a list');
  options.namespaces = namespaces.map((entry, index): NamespaceConfig => {
    const path = `channel.namespaces[${index}]`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
      throw new ConfigError(`${path} must be an object`);
    const name = reader.string(entry as Json, 'name', path);
    if (!name) throw new ConfigError(`${path}.name is required`);
    return { name, ...reader.channelOptions(entry as Json, path) };
  });
  // `channel.publication_data_format` is the default of every namespace that does not set its own.
  const format = reader.string(channel, 'publication_data_format', 'channel');
  if (format !== undefined) {
    for (const namespace of [options.withoutNamespace, ...options.namespaces]) {
      namespace.publication_data_format ??= format as ChannelOptions['publication_data_format'];
    }
  }
  const rules: Partial<ChannelRules> = {};
  reader.fields(channel, 'channel', rules, CHANNEL_RULE_FIELDS);
  options.channelRules = rules;
}

function readEngine(reader: Reader, root: Json): StandaloneSettings['engine'] {
  const engine = reader.section(root, 'engine', '');
  reader.checkKeys(engine, 'engine', ['type', 'redis']);
  const type = reader.string(engine, 'type', 'engine') ?? 'memory';
  if (type !== 'memory' && type !== 'redis')
    throw new ConfigError(`engine.type "${type}" is not supported (memory, redis)`);
  const redis = reader.section(engine, 'redis', 'engine');
  reader.checkKeys(redis, 'engine.redis', ['address', 'prefix']);
  const rawAddress = redis.address;
  let address: string | undefined;
  if (Array.isArray(rawAddress)) {
    if (rawAddress.some((a) => typeof a !== 'string'))
      throw new ConfigError('engine.redis.address must hold strings');
    address = rawAddress[0] as string | undefined;
    if (rawAddress.length > 1)
      reader.warnings.push('engine.redis.address: sharding is not supported, using the first');
  } else {
    address = reader.string(redis, 'address', 'engine.redis');
  }
  if (type === 'memory') return { type };
  const url = address ?? 'redis://127.0.0.1:6379';
  const result: StandaloneSettings['engine'] = {
    type,
    redisUrl: url.includes('://') ? url : `redis://${url}`,
  };
  assign(result, 'redisPrefix', reader.string(redis, 'prefix', 'engine.redis'));
  return result;
}

/** Parses a Centrifugo v6 JSON configuration (text or an already parsed object). */
export function loadCentrifugoConfig(config: string | Json): StandaloneSettings {
  let root: unknown = config;
  if (typeof config === 'string') {
    try {
      root = JSON.parse(config);
    } catch (error) {
      throw new ConfigError(`configuration is not valid JSON: ${(error as Error).message}`);
    }
  }
  if (root === null || typeof root !== 'object' || Array.isArray(root))
    throw new ConfigError('configuration must be an object');
  const json = root as Json;
  const reader = new Reader();
  reader.checkKeys(json, '', [
    'client',
    'channel',
    'http_api',
    'engine',
    'http_server',
    'websocket',
    'log',
    'rpc',
    'proxies',
    'http_stream',
    'sse',
    'emulation',
    'node',
    'health',
    'prometheus',
  ]);
  // Centrifugo OSS limits no connection's command rate; the engine's default limit is for hosts such as the webchat.
  const options: RealtimeEngineOptions = { commandRate: false };
  readClient(reader, json, options);
  readChannel(reader, json, options);
  readProxies(reader, json, options);
  readEmulation(reader, json, options);
  const node = reader.section(json, 'node', '');
  reader.checkKeys(node, 'node', ['name']);
  assign(options, 'nodeName', reader.string(node, 'name', 'node'));
  const prometheus = reader.section(json, 'prometheus', '');
  reader.checkKeys(prometheus, 'prometheus', ['enabled']);
  const health = reader.section(json, 'health', '');
  reader.checkKeys(health, 'health', ['enabled', 'handler_prefix']);

  const httpApi = reader.section(json, 'http_api', '');
  reader.checkKeys(httpApi, 'http_api', [...keysOf(HTTP_API_FIELDS), 'error_mode']);
  reader.fields(httpApi, 'http_api', options, HTTP_API_FIELDS);
  const errorMode = reader.string(httpApi, 'error_mode', 'http_api');
  if (errorMode !== undefined && errorMode !== '' && errorMode !== 'transport') {
    throw new ConfigError(`http_api.error_mode "${errorMode}" is not supported ("" or "transport")`);
  }
  if (errorMode === 'transport') options.apiTransportErrorMode = true;

  const websocket = reader.section(json, 'websocket', '');
  reader.checkKeys(websocket, 'websocket', keysOf(WEBSOCKET_FIELDS));
  reader.fields(websocket, 'websocket', options, WEBSOCKET_FIELDS);

  const httpServer = reader.section(json, 'http_server', '');
  reader.checkKeys(httpServer, 'http_server', ['port', 'address']);
  const log = reader.section(json, 'log', '');
  reader.checkKeys(log, 'log', ['level']);
  const level = reader.string(log, 'level', 'log') ?? 'info';
  const logLevel = level === 'trace' ? 'debug' : level;
  if (!['debug', 'info', 'warn', 'error', 'none'].includes(logLevel))
    throw new ConfigError(`log.level "${level}" is not supported`);

  return {
    options,
    engine: readEngine(reader, json),
    httpServer: {
      port: reader.number(httpServer, 'port', 'http_server') ?? 8000,
      address: reader.string(httpServer, 'address', 'http_server') ?? '',
    },
    prometheus: reader.bool(prometheus, 'enabled', 'prometheus') === true,
    healthPath:
      reader.bool(health, 'enabled', 'health') === false
        ? undefined
        : (reader.string(health, 'handler_prefix', 'health') ?? '/health'),
    logLevel: logLevel as StandaloneSettings['logLevel'],
    unknownKeys: reader.unknownKeys,
    warnings: reader.warnings,
  };
}
