import { toMilliseconds } from '../config/duration.ts';
import { ConfigError } from '../config/errors.ts';
import type { ChannelOptions } from '../engine/namespaces.ts';

// The typed reader of a Centrifugo JSON config, shared by config.ts (client, channel, engine sections) and
// transport-config.ts (proxies, emulation), so neither imports the other.
export type Json = Record<string, unknown>;

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
export type Kind = keyof KindValues;
/** The kinds whose value fits an option of type `V`, so a table entry cannot put a string into a number option. */
type KindFor<V> = { [K in Kind]: KindValues[K] extends NonNullable<V> ? K : never }[Kind];
/**
 * Options copied as read, `option: [Centrifugo key, kind]`. The same table lists the section's known keys, so a
 * key cannot be accepted without being read, or read while being reported as unknown.
 */
export type Fields<T> = { [P in keyof T]?: readonly [key: string, kind: KindFor<T[P]>] };

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

export function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

export function assign<T extends object, K extends keyof T>(
  target: T,
  key: K,
  value: T[K] | undefined,
): void {
  if (value !== undefined) target[key] = value;
}
