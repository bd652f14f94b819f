import { toMilliseconds } from '../config/duration.ts';
import { ConfigError } from '../config/errors.ts';
import type { ChannelOptions, ChannelRules, NamespaceConfig } from '../engine/namespaces.ts';
import type { RealtimeEngineOptions } from '../engine/options.ts';
import type { TokenOptions } from '../tokens/verifier.ts';
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

type Json = Record<string, unknown>;

const CHANNEL_OPTION_KEYS = new Set<keyof ChannelOptions>([
  'presence',
  'join_leave',
  'force_push_join_leave',
  'history_size',
  'history_ttl',
  'history_meta_ttl',
  'force_positioning',
  'allow_positioning',
  'force_recovery',
  'allow_recovery',
  'force_recovery_mode',
  'allow_subscribe_for_client',
  'allow_subscribe_for_anonymous',
  'allow_publish_for_subscriber',
  'allow_publish_for_client',
  'allow_publish_for_anonymous',
  'allow_history_for_subscriber',
  'allow_history_for_client',
  'allow_history_for_anonymous',
  'allow_presence_for_subscriber',
  'allow_presence_for_client',
  'allow_presence_for_anonymous',
  'allow_user_limited_channels',
  'channel_regex',
  'publication_data_format',
  'allowed_delta_types',
  'delta_publish',
  'subscribe_proxy_enabled',
  'subscribe_proxy_name',
  'publish_proxy_enabled',
  'publish_proxy_name',
  'sub_refresh_proxy_enabled',
  'sub_refresh_proxy_name',
]);
const DURATION_CHANNEL_KEYS = new Set(['history_ttl', 'history_meta_ttl']);

/** What each `Reader` method yields. */
interface KindValues {
  string: string;
  bool: boolean;
  number: number;
  strings: string[];
  durationMs: number;
}
type Kind = keyof KindValues;
/** The kinds whose value fits an option of type `V`, so a table entry cannot put a string into a number option. */
type KindFor<V> = { [K in Kind]: KindValues[K] extends NonNullable<V> ? K : never }[Kind];
/**
 * Options copied as read, `option: [Centrifugo key, kind]`. The same table lists the section's known keys, so a
 * key cannot be accepted without being read, or read while being reported as unknown.
 */
type Fields<T> = { [P in keyof T]?: readonly [key: string, kind: KindFor<T[P]>] };

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

/** Reads typed values out of the parsed JSON, collecting unknown keys and remarks as it goes. */
export class Reader {
  readonly unknownKeys: string[] = [];
  readonly warnings: string[] = [];

  /** Marks every key of `object` not in `known` as unknown. */
  checkKeys(object: Json, path: string, known: readonly string[]): void {
    for (const key of Object.keys(object)) {
      if (!known.includes(key)) this.unknownKeys.push(path ? `${path}.${key}` : key);
    }
  }

  section(parent: Json, key: string, path: string): Json {
    const value = parent[key];
    if (value === undefined || value === null) return {};
    if (typeof value !== 'object' || Array.isArray(value))
      throw new ConfigError(`${join(path, key)} must be an object`);
    return value as Json;
  }

  string(object: Json, key: string, path: string): string | undefined {
    const value = object[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') throw new ConfigError(`${join(path, key)} must be a string`);
    return value;
  }

  bool(object: Json, key: string, path: string): boolean | undefined {
    const value = object[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'boolean') throw new ConfigError(`${join(path, key)} must be true or false`);
    return value;
  }

  number(object: Json, key: string, path: string): number | undefined {
    const value = object[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw new ConfigError(`${join(path, key)} must be a number`);
    return value;
  }

  strings(object: Json, key: string, path: string): string[] | undefined {
    const value = object[key];
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
      throw new ConfigError(`${join(path, key)} must be a list of strings`);
    }
    return value as string[];
  }

  /** Centrifugo durations: a Go duration string, or a number of nanoseconds (Go `Duration.UnmarshalJSON`). */
  durationMs(object: Json, key: string, path: string): number | undefined {
    const value = object[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'number') {
      this.warnings.push(
        `${join(path, key)}: a number is read as nanoseconds (as Centrifugo does); prefer "30s"`,
      );
      return value / 1e6;
    }
    if (typeof value !== 'string') throw new ConfigError(`${join(path, key)} must be a duration like "30s"`);
    return toMilliseconds(value, join(path, key));
  }

  /** Reads every entry of `fields` from `object` into `target`; absent keys leave the option unset. */
  fields<T extends object>(object: Json, path: string, target: T, fields: Fields<T>): void {
    for (const [option, field] of Object.entries(fields) as [keyof T & string, readonly [string, Kind]][]) {
      assign(target, option, this[field[1]](object, field[0], path) as T[keyof T] | undefined);
    }
  }

  channelOptions(object: Json, path: string): ChannelOptions {
    const options: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(object)) {
      if (key === 'name') continue;
      if (!CHANNEL_OPTION_KEYS.has(key as keyof ChannelOptions)) {
        this.unknownKeys.push(join(path, key));
        continue;
      }
      options[key] = DURATION_CHANNEL_KEYS.has(key) ? this.durationMs(object, key, path) : value;
    }
    return options as ChannelOptions;
  }
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function assign<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value;
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
