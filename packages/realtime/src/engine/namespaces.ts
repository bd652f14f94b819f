import type { HistoryRetention } from '../broker/types.ts';
import { type DurationInput, toMilliseconds } from '../config/duration.ts';
import { ConfigError } from '../config/errors.ts';
import type { ChannelProxyNames } from '../proxy/options.ts';

/**
 * Channel options with Centrifugo's names (CFGO `configtypes/namespace.go`), so a Centrifugo `channel.namespaces`
 * entry can be used as is. Durations accept Centrifugo strings ("1h", "300s") or milliseconds.
 */
export interface ChannelOptions {
  /** Track who is subscribed (presence, presence_stats). */
  presence?: boolean;
  /** Publish join/leave events when clients subscribe and unsubscribe. */
  join_leave?: boolean;
  /** Push join/leave to every subscriber, even those that did not ask with `join_leave: true`. */
  force_push_join_leave?: boolean;
  /** Publications kept per channel; history needs both `history_size` and `history_ttl` > 0. */
  history_size?: number;
  /** How long the window survives without a publish. */
  history_ttl?: DurationInput;
  /** How long epoch and top offset survive; default `channel.history_meta_ttl` (30 days). */
  history_meta_ttl?: DurationInput;
  force_positioning?: boolean;
  allow_positioning?: boolean;
  /** Recover missed publications on resubscribe (implies positioning). */
  force_recovery?: boolean;
  allow_recovery?: boolean;
  /** Only "stream" is supported (the default); "cache" is reported as unsupported. */
  force_recovery_mode?: 'stream';
  allow_subscribe_for_client?: boolean;
  allow_subscribe_for_anonymous?: boolean;
  allow_publish_for_subscriber?: boolean;
  allow_publish_for_client?: boolean;
  allow_publish_for_anonymous?: boolean;
  allow_history_for_subscriber?: boolean;
  allow_history_for_client?: boolean;
  allow_history_for_anonymous?: boolean;
  allow_presence_for_subscriber?: boolean;
  allow_presence_for_client?: boolean;
  allow_presence_for_anonymous?: boolean;
  /** Channels like `dialog#42,43` may be subscribed by the listed users without a token. */
  allow_user_limited_channels?: boolean;
  /** Regular expression the part after `namespace:` must match (else 107). */
  channel_regex?: string;
  /** "" (non-empty data), "json", "json_object" or "binary" (CFGO `format.go`). */
  publication_data_format?: '' | 'json' | 'json_object' | 'binary';
  /** Delta types subscribers may ask for: `["fossil"]` or none (docs/protocol.md "Delta compression"). */
  allowed_delta_types?: string[];
  /** Every publication of the namespace is published for delta delivery (else only API publishes with `delta`). */
  delta_publish?: boolean;
  /** Subscriptions without a token are decided by the subscribe proxy `subscribe_proxy_name` ("default"). */
  subscribe_proxy_enabled?: boolean;
  subscribe_proxy_name?: string;
  /** Client publications are decided (and may be rewritten) by the publish proxy, instead of `allow_publish_*`. */
  publish_proxy_enabled?: boolean;
  publish_proxy_name?: string;
  /** Expiring subscriptions are renewed server-side by the sub_refresh proxy. */
  sub_refresh_proxy_enabled?: boolean;
  sub_refresh_proxy_name?: string;
}

export interface NamespaceConfig extends ChannelOptions {
  /** `^[-a-zA-Z0-9_.]{2,}$`; channels `name:rest` use these options. */
  name: string;
}

/** Channel options after defaults and unit conversion; shared by every subscription of a namespace. */
export interface ResolvedChannelOptions {
  readonly namespace: string;
  readonly presence: boolean;
  readonly joinLeave: boolean;
  readonly forcePushJoinLeave: boolean;
  /** Set when history is on (`history_size` > 0 and `history_ttl` > 0). */
  readonly history: HistoryRetention | undefined;
  readonly forcePositioning: boolean;
  readonly allowPositioning: boolean;
  readonly forceRecovery: boolean;
  readonly allowRecovery: boolean;
  readonly subscribeForClient: boolean;
  readonly subscribeForAnonymous: boolean;
  readonly publishForSubscriber: boolean;
  readonly publishForClient: boolean;
  readonly publishForAnonymous: boolean;
  readonly historyForSubscriber: boolean;
  readonly historyForClient: boolean;
  readonly historyForAnonymous: boolean;
  readonly presenceForSubscriber: boolean;
  readonly presenceForClient: boolean;
  readonly presenceForAnonymous: boolean;
  readonly userLimitedChannels: boolean;
  readonly channelRegex: RegExp | undefined;
  readonly publicationDataFormat: '' | 'json' | 'json_object' | 'binary';
  /** Subscribers may ask for fossil deltas (`allowed_delta_types` holds "fossil"). */
  readonly fossilDelta: boolean;
  readonly deltaPublish: boolean;
  /** The proxy each decision goes to, by name (`undefined` = no proxy), docs/protocol.md "Proxies". */
  readonly proxies: ChannelProxyNames;
}

export interface ChannelRules {
  /** Maximum channel name length (Centrifugo `channel.max_length`, 255) → 107. */
  maxLength: number;
  privatePrefix: string;
  namespaceBoundary: string;
  userBoundary: string;
  userSeparator: string;
  /** Default `history_meta_ttl` (Centrifugo 720h). */
  historyMetaTtlMs: number;
}

export const DEFAULT_CHANNEL_RULES: ChannelRules = {
  maxLength: 255,
  privatePrefix: '$',
  namespaceBoundary: ':',
  userBoundary: '#',
  userSeparator: ',',
  historyMetaTtlMs: 720 * 3_600_000,
};

const NAMESPACE_NAME = /^[-a-zA-Z0-9_.]{2,}$/;
const DATA_FORMATS = new Set(['', 'json', 'json_object', 'binary']);

export function resolveChannelOptions(
  namespace: string,
  options: ChannelOptions,
  defaultMetaTtlMs: number,
): ResolvedChannelOptions {
  const where = namespace === '' ? 'channel.without_namespace' : `namespace "${namespace}"`;
  const size = options.history_size ?? 0;
  if (!Number.isInteger(size) || size < 0)
    throw new ConfigError(`${where}: history_size must be a whole number`);
  const ttlMs = toMilliseconds(options.history_ttl, `${where}.history_ttl`) ?? 0;
  const metaTtlMs = toMilliseconds(options.history_meta_ttl, `${where}.history_meta_ttl`) || defaultMetaTtlMs;
  const format = options.publication_data_format ?? '';
  if (!DATA_FORMATS.has(format))
    throw new ConfigError(`${where}: unknown publication_data_format "${format}"`);
  if (options.force_recovery_mode !== undefined && options.force_recovery_mode !== 'stream') {
    throw new ConfigError(
      `${where}: force_recovery_mode "${String(options.force_recovery_mode)}" is not supported`,
    );
  }
  let channelRegex: RegExp | undefined;
  if (options.channel_regex) {
    try {
      channelRegex = new RegExp(options.channel_regex);
    } catch (error) {
      throw new ConfigError(`${where}: invalid channel_regex (${(error as Error).message})`);
    }
  }
  const deltaTypes = options.allowed_delta_types ?? [];
  if (!Array.isArray(deltaTypes) || deltaTypes.some((t) => t !== 'fossil')) {
    throw new ConfigError(`${where}: allowed_delta_types may only hold "fossil"`);
  }
  const history = size > 0 && ttlMs > 0 ? { size, ttlMs, metaTtlMs } : undefined;
  const forceRecovery = options.force_recovery === true;
  if ((forceRecovery || options.force_positioning) && history === undefined) {
    throw new ConfigError(`${where}: force_recovery/force_positioning need history_size and history_ttl`);
  }
  return {
    namespace,
    presence: options.presence === true,
    joinLeave: options.join_leave === true,
    forcePushJoinLeave: options.force_push_join_leave === true,
    history,
    // Recovery implies positioning (docs/protocol.md "Subscribe").
    forcePositioning: options.force_positioning === true || forceRecovery,
    allowPositioning: options.allow_positioning === true,
    forceRecovery,
    allowRecovery: options.allow_recovery === true,
    subscribeForClient: options.allow_subscribe_for_client === true,
    subscribeForAnonymous: options.allow_subscribe_for_anonymous === true,
    publishForSubscriber: options.allow_publish_for_subscriber === true,
    publishForClient: options.allow_publish_for_client === true,
    publishForAnonymous: options.allow_publish_for_anonymous === true,
    historyForSubscriber: options.allow_history_for_subscriber === true,
    historyForClient: options.allow_history_for_client === true,
    historyForAnonymous: options.allow_history_for_anonymous === true,
    presenceForSubscriber: options.allow_presence_for_subscriber === true,
    presenceForClient: options.allow_presence_for_client === true,
    presenceForAnonymous: options.allow_presence_for_anonymous === true,
    userLimitedChannels: options.allow_user_limited_channels === true,
    channelRegex,
    publicationDataFormat: format,
    fossilDelta: deltaTypes.includes('fossil'),
    deltaPublish: options.delta_publish === true,
    proxies: {
      subscribe: options.subscribe_proxy_enabled ? (options.subscribe_proxy_name ?? 'default') : undefined,
      publish: options.publish_proxy_enabled ? (options.publish_proxy_name ?? 'default') : undefined,
      sub_refresh: options.sub_refresh_proxy_enabled
        ? (options.sub_refresh_proxy_name ?? 'default')
        : undefined,
    },
  };
}

export interface ResolvedChannel {
  options: ResolvedChannelOptions;
  /** The part after `namespace:` (the whole name without a namespace). */
  rest: string;
}

/** Maps channel names to namespace options with Centrifugo's parsing rules (CFGO `container.go`). */
export class ChannelRegistry {
  readonly rules: ChannelRules;
  private readonly withoutNamespace: ResolvedChannelOptions;
  private readonly namespaces = new Map<string, ResolvedChannelOptions>();

  constructor(
    namespaces: NamespaceConfig[] = [],
    withoutNamespace: ChannelOptions = {},
    rules?: Partial<ChannelRules>,
  ) {
    this.rules = { ...DEFAULT_CHANNEL_RULES, ...rules };
    this.withoutNamespace = resolveChannelOptions('', withoutNamespace, this.rules.historyMetaTtlMs);
    for (const namespace of namespaces) {
      if (typeof namespace.name !== 'string' || !NAMESPACE_NAME.test(namespace.name)) {
        throw new ConfigError(
          `invalid namespace name "${String(namespace.name)}" (must match ${NAMESPACE_NAME})`,
        );
      }
      if (this.namespaces.has(namespace.name))
        throw new ConfigError(`duplicate namespace "${namespace.name}"`);
      this.namespaces.set(
        namespace.name,
        resolveChannelOptions(namespace.name, namespace, this.rules.historyMetaTtlMs),
      );
    }
  }

  /** The options of every namespace, channels without a namespace first. */
  allOptions(): ResolvedChannelOptions[] {
    return [this.withoutNamespace, ...this.namespaces.values()];
  }

  /** Options of the channel's namespace, or `undefined` for an unknown namespace (→ 102). */
  resolve(channel: string): ResolvedChannel | undefined {
    const { privatePrefix, namespaceBoundary } = this.rules;
    const trimmed =
      privatePrefix && channel.startsWith(privatePrefix) ? channel.slice(privatePrefix.length) : channel;
    const boundary = namespaceBoundary ? trimmed.indexOf(namespaceBoundary) : -1;
    if (boundary < 0) return { options: this.withoutNamespace, rest: channel };
    const options = this.namespaces.get(trimmed.slice(0, boundary));
    if (options === undefined) return undefined;
    return { options, rest: trimmed.slice(boundary + namespaceBoundary.length) };
  }

  /** Name checks Centrifugo applies before anything else: ASCII only or the namespace's `channel_regex` (→ 107). */
  isValidName(channel: string, resolved: ResolvedChannel): boolean {
    if (resolved.options.channelRegex) return resolved.options.channelRegex.test(resolved.rest);
    for (let i = 0; i < channel.length; i++) if (channel.charCodeAt(i) > 127) return false;
    return true;
  }

  isPrivate(channel: string): boolean {
    return this.rules.privatePrefix !== '' && channel.startsWith(this.rules.privatePrefix);
  }

  isUserLimited(channel: string): boolean {
    return this.rules.userBoundary !== '' && channel.includes(this.rules.userBoundary);
  }

  /** For `chat#42,43`: whether `user` is in the list after the last user boundary. */
  userAllowed(channel: string, user: string): boolean {
    const { userBoundary, userSeparator } = this.rules;
    if (userBoundary === '' || !channel.includes(userBoundary)) return true;
    const tail = channel.slice(channel.lastIndexOf(userBoundary) + userBoundary.length);
    return userSeparator === '' ? tail === user : tail.split(userSeparator).includes(user);
  }
}

/** Centrifugo's `publication_data_format` check (CFGO `config/format.go`); failure → 107. */
export function isValidPublicationData(
  data: string,
  format: ResolvedChannelOptions['publicationDataFormat'],
): boolean {
  switch (format) {
    case 'binary':
      return true;
    case 'json':
    case 'json_object': {
      try {
        const value = JSON.parse(data);
        return format === 'json' || (value !== null && typeof value === 'object' && !Array.isArray(value));
      } catch {
        return false;
      }
    }
    default:
      return data.length > 0;
  }
}
