import { parseGoDuration } from '../config/duration.ts';
import { ConfigError } from '../config/errors.ts';
import type { ChannelOptions, ChannelRules, NamespaceConfig } from '../config/namespaces.ts';
import type { RealtimeEngineOptions } from '../config/options.ts';

/**
 * Loads a Centrifugo v6 JSON configuration (CFGO `internal/configtypes`) into engine options. Every key that this
 * engine does not implement is reported in `unknownKeys` (dotted paths) so nothing is silently ignored.
 */

export interface StandaloneSettings {
  /** Engine options (without broker instances; `runStandalone` creates them from `engine`). */
  options: RealtimeEngineOptions;
  engine: { type: 'memory' | 'redis'; redisUrl?: string; redisPrefix?: string };
  httpServer: { port: number; address: string };
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
]);
const DURATION_CHANNEL_KEYS = new Set(['history_ttl', 'history_meta_ttl']);

class Reader {
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
    try {
      return parseGoDuration(value);
    } catch (error) {
      throw new ConfigError(`${join(path, key)}: ${(error as Error).message}`);
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
  reader.checkKeys(client, 'client', [
    'token',
    'allowed_origins',
    'insecure',
    'allow_anonymous_connect_without_token',
    'disallow_anonymous_connection_tokens',
    'ping_interval',
    'pong_timeout',
    'expired_close_delay',
    'expired_sub_close_delay',
    'stale_close_delay',
    'channel_limit',
    'queue_max_size',
    'presence_update_interval',
    'channel_position_check_delay',
    'user_connection_limit',
    'history_max_publication_limit',
    'recovery_max_publication_limit',
  ]);
  const token = reader.section(client, 'token', 'client');
  reader.checkKeys(token, 'client.token', [
    'hmac_secret_key',
    'hmac_previous_secret_key',
    'rsa_public_key',
    'ecdsa_public_key',
    'audience',
    'issuer',
    'user_id_claim',
  ]);
  const hmac = [
    reader.string(token, 'hmac_secret_key', 'client.token'),
    reader.string(token, 'hmac_previous_secret_key', 'client.token'),
  ].filter((k): k is string => k !== undefined && k !== '');
  options.token = {};
  if (hmac.length > 0) options.token.hmacSecretKeys = hmac;
  assign(options.token, 'rsaPublicKey', reader.string(token, 'rsa_public_key', 'client.token'));
  assign(options.token, 'ecdsaPublicKey', reader.string(token, 'ecdsa_public_key', 'client.token'));
  assign(options.token, 'audience', reader.string(token, 'audience', 'client.token'));
  assign(options.token, 'issuer', reader.string(token, 'issuer', 'client.token'));
  assign(options.token, 'userIdClaim', reader.string(token, 'user_id_claim', 'client.token'));
  assign(options, 'allowedOrigins', reader.strings(client, 'allowed_origins', 'client'));
  assign(options, 'insecure', reader.bool(client, 'insecure', 'client'));
  assign(
    options,
    'allowAnonymousConnectWithoutToken',
    reader.bool(client, 'allow_anonymous_connect_without_token', 'client'),
  );
  assign(
    options,
    'disallowAnonymousConnectionTokens',
    reader.bool(client, 'disallow_anonymous_connection_tokens', 'client'),
  );
  // Centrifugo uses -1 to switch pings / pong checks off; the engine uses 0.
  const ping = reader.durationMs(client, 'ping_interval', 'client');
  assign(options, 'pingIntervalMs', ping === undefined ? undefined : Math.max(0, ping));
  const pong = reader.durationMs(client, 'pong_timeout', 'client');
  assign(options, 'pongTimeoutMs', pong === undefined ? undefined : Math.max(0, pong));
  assign(options, 'expiredCloseDelayMs', reader.durationMs(client, 'expired_close_delay', 'client'));
  assign(options, 'expiredSubCloseDelayMs', reader.durationMs(client, 'expired_sub_close_delay', 'client'));
  assign(options, 'staleCloseDelayMs', reader.durationMs(client, 'stale_close_delay', 'client'));
  assign(options, 'channelLimit', reader.number(client, 'channel_limit', 'client'));
  assign(options, 'maxBufferedBytes', reader.number(client, 'queue_max_size', 'client'));
  assign(
    options,
    'presenceUpdateIntervalMs',
    reader.durationMs(client, 'presence_update_interval', 'client'),
  );
  assign(
    options,
    'channelPositionCheckDelayMs',
    reader.durationMs(client, 'channel_position_check_delay', 'client'),
  );
  assign(options, 'userConnectionLimit', reader.number(client, 'user_connection_limit', 'client'));
  assign(
    options,
    'historyMaxPublicationLimit',
    reader.number(client, 'history_max_publication_limit', 'client'),
  );
  assign(
    options,
    'recoveryMaxPublicationLimit',
    reader.number(client, 'recovery_max_publication_limit', 'client'),
  );
}

function readChannel(reader: Reader, root: Json, options: RealtimeEngineOptions): void {
  const channel = reader.section(root, 'channel', '');
  reader.checkKeys(channel, 'channel', [
    'without_namespace',
    'namespaces',
    'max_length',
    'private_prefix',
    'namespace_boundary',
    'user_boundary',
    'user_separator',
    'history_meta_ttl',
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
  const rules: Partial<ChannelRules> = {};
  assign(rules, 'maxLength', reader.number(channel, 'max_length', 'channel'));
  assign(rules, 'privatePrefix', reader.string(channel, 'private_prefix', 'channel'));
  assign(rules, 'namespaceBoundary', reader.string(channel, 'namespace_boundary', 'channel'));
  assign(rules, 'userBoundary', reader.string(channel, 'user_boundary', 'channel'));
  assign(rules, 'userSeparator', reader.string(channel, 'user_separator', 'channel'));
  assign(rules, 'historyMetaTtlMs', reader.durationMs(channel, 'history_meta_ttl', 'channel'));
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
  reader.checkKeys(json, '', ['client', 'channel', 'http_api', 'engine', 'http_server', 'websocket', 'log']);
  const options: RealtimeEngineOptions = {};
  readClient(reader, json, options);
  readChannel(reader, json, options);

  const httpApi = reader.section(json, 'http_api', '');
  reader.checkKeys(httpApi, 'http_api', ['key', 'insecure', 'handler_prefix']);
  assign(options, 'apiKey', reader.string(httpApi, 'key', 'http_api'));
  assign(options, 'apiInsecure', reader.bool(httpApi, 'insecure', 'http_api'));
  assign(options, 'apiPrefix', reader.string(httpApi, 'handler_prefix', 'http_api'));

  const websocket = reader.section(json, 'websocket', '');
  reader.checkKeys(websocket, 'websocket', ['message_size_limit', 'handler_prefix']);
  assign(options, 'maxFrameBytes', reader.number(websocket, 'message_size_limit', 'websocket'));
  assign(options, 'websocketPath', reader.string(websocket, 'handler_prefix', 'websocket'));

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
    logLevel: logLevel as StandaloneSettings['logLevel'],
    unknownKeys: reader.unknownKeys,
    warnings: reader.warnings,
  };
}
