import { type DurationInput, toMilliseconds } from '../config/duration.ts';
import { ConfigError } from '../config/errors.ts';

/**
 * Proxies (docs/protocol.md "Proxies"): the engine asks the application's HTTP backend to decide a connect, refresh,
 * subscribe, publish, sub_refresh or RPC, with Centrifugo v6's configuration names and payloads. Options use
 * Centrifugo's key names so a Centrifugo config maps one to one.
 */

/** Maps a backend's HTTP status to a protocol error or disconnect (`http.status_to_code_transforms`). */
export interface StatusToCodeTransform {
  status_code: number;
  to_error?: { code: number; message?: string; temporary?: boolean };
  to_disconnect?: { code: number; reason?: string };
}

/** One proxy endpoint (Centrifugo `Proxy`). */
export interface ProxyEndpointOptions {
  /** The backend URL the request is POSTed to. */
  endpoint: string;
  /** Time the backend has to answer (Centrifugo default 1 s). */
  timeout?: DurationInput;
  /** Headers of the client's HTTP request (WebSocket upgrade, stream request) passed on, by name. */
  http_headers?: string[];
  /** Headers added to every request; the client's own headers win. */
  static_headers?: Record<string, string>;
  status_to_code_transforms?: StatusToCodeTransform[];
  /** Payloads as base64 (`b64data`, `b64info`) instead of embedded JSON. */
  binary_encoding?: boolean;
  /** Add the connection's `meta` to every request but connect. */
  include_connection_meta?: boolean;
}

/** Where RPC methods go: by the namespace before `:` in the method name (Centrifugo `rpc`). */
export interface RpcProxyRouting {
  without_namespace?: { proxy_enabled?: boolean; proxy_name?: string };
  namespaces?: Array<{ name: string; proxy_enabled?: boolean; proxy_name?: string }>;
  /** Separator between the RPC namespace and the method (":"). */
  namespace_boundary?: string;
}

/** Engine option `proxy`: the proxies by kind (the name "default" of each kind) and the named ones. */
export interface ProxyOptions {
  /** `client.proxy.connect`: decides connections that come without a token. */
  connect?: ProxyEndpointOptions;
  /** `client.proxy.refresh`: renews expiring connections server-side (clients are not asked to refresh). */
  refresh?: ProxyEndpointOptions;
  /** `channel.proxy.subscribe|publish|sub_refresh`: the "default" of each, used by namespaces that enable it. */
  subscribe?: ProxyEndpointOptions;
  publish?: ProxyEndpointOptions;
  sub_refresh?: ProxyEndpointOptions;
  /** `rpc.proxy`: the "default" RPC proxy. */
  rpc?: ProxyEndpointOptions;
  /** `proxies`: named proxies a namespace picks with `*_proxy_name`. */
  named?: Record<string, ProxyEndpointOptions>;
  rpc_routing?: RpcProxyRouting;
}

export interface ResolvedProxyEndpoint {
  name: string;
  endpoint: string;
  timeoutMs: number;
  httpHeaders: string[];
  staticHeaders: Record<string, string>;
  transforms: StatusToCodeTransform[];
  binaryEncoding: boolean;
  includeMeta: boolean;
}

export type ChannelProxyKind = 'subscribe' | 'publish' | 'sub_refresh';

/** A namespace's proxy switches (`subscribe_proxy_enabled`, `publish_proxy_name`…), resolved. */
export interface ChannelProxyNames {
  subscribe: string | undefined;
  publish: string | undefined;
  sub_refresh: string | undefined;
}

const DEFAULT_TIMEOUT_MS = 1_000;

function resolveEndpoint(name: string, options: ProxyEndpointOptions, where: string): ResolvedProxyEndpoint {
  if (typeof options.endpoint !== 'string' || !/^https?:\/\//.test(options.endpoint)) {
    throw new ConfigError(`${where}.endpoint must be an http(s) URL (gRPC proxies are not supported)`);
  }
  return {
    name,
    endpoint: options.endpoint,
    timeoutMs: toMilliseconds(options.timeout, `${where}.timeout`) || DEFAULT_TIMEOUT_MS,
    httpHeaders: (options.http_headers ?? []).map((h) => h.toLowerCase()),
    staticHeaders: options.static_headers ?? {},
    transforms: options.status_to_code_transforms ?? [],
    binaryEncoding: options.binary_encoding === true,
    includeMeta: options.include_connection_meta === true,
  };
}

/**
 * The configured proxies, looked up the way Centrifugo does: a namespace names a proxy (`default` = the kind's own
 * `channel.proxy.<kind>`, anything else = an entry of `proxies`); RPC methods route by their namespace.
 */
export class ProxyDirectory {
  readonly connect: ResolvedProxyEndpoint | undefined;
  readonly refresh: ResolvedProxyEndpoint | undefined;
  /** Whether any proxy is configured (connections then keep the headers `http_headers` may pass on). */
  readonly active: boolean;
  private readonly defaults = new Map<string, ResolvedProxyEndpoint>();
  private readonly named = new Map<string, ResolvedProxyEndpoint>();
  private readonly rpcRouting: RpcProxyRouting;

  constructor(options: ProxyOptions = {}) {
    this.connect = options.connect && resolveEndpoint('connect', options.connect, 'proxy.connect');
    this.refresh = options.refresh && resolveEndpoint('refresh', options.refresh, 'proxy.refresh');
    for (const kind of ['subscribe', 'publish', 'sub_refresh', 'rpc'] as const) {
      const entry = options[kind];
      if (entry) this.defaults.set(kind, resolveEndpoint('default', entry, `proxy.${kind}`));
    }
    for (const [name, entry] of Object.entries(options.named ?? {})) {
      this.named.set(name, resolveEndpoint(name, entry, `proxies.${name}`));
    }
    this.rpcRouting = options.rpc_routing ?? {};
    this.active =
      this.connect !== undefined ||
      this.refresh !== undefined ||
      this.defaults.size > 0 ||
      this.named.size > 0;
  }

  /** The proxy a namespace names for `kind`; ConfigError when it names one that does not exist. */
  channelProxy(kind: ChannelProxyKind, name: string | undefined): ResolvedProxyEndpoint | undefined {
    if (name === undefined) return undefined;
    const found = name === 'default' ? this.defaults.get(kind) : this.named.get(name);
    if (found === undefined) throw new ConfigError(`the ${kind} proxy "${name}" is not configured`);
    return found;
  }

  /**
   * The proxy for an RPC method: `undefined` when its namespace has no proxy (→ 108), `null` when the method names
   * an RPC namespace that does not exist (→ 104, as Centrifugo).
   */
  rpcProxy(method: string): ResolvedProxyEndpoint | undefined | null {
    const boundary = this.rpcRouting.namespace_boundary ?? ':';
    const at = boundary === '' ? -1 : method.indexOf(boundary);
    const options =
      at < 0
        ? this.rpcRouting.without_namespace
        : this.rpcRouting.namespaces?.find((n) => n.name === method.slice(0, at));
    if (at >= 0 && options === undefined) return null;
    if (!options?.proxy_enabled) return undefined;
    const name = options.proxy_name ?? 'default';
    const found = name === 'default' ? this.defaults.get('rpc') : this.named.get(name);
    if (found === undefined) throw new ConfigError(`the rpc proxy "${name}" is not configured`);
    return found;
  }

  /** Checks at start that every namespace names proxies that exist (a typo is a configuration error). */
  validate(namespaces: Iterable<ChannelProxyNames>): void {
    for (const names of namespaces) {
      for (const kind of ['subscribe', 'publish', 'sub_refresh'] as const)
        this.channelProxy(kind, names[kind]);
    }
  }
}
