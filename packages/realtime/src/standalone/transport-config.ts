import { ConfigError } from '../config/errors.ts';
import type { RealtimeEngineOptions } from '../engine/options.ts';
import type {
  ProxyEndpointOptions,
  ProxyOptions,
  RpcProxyRouting,
  StatusToCodeTransform,
} from '../proxy/options.ts';
import type { Reader } from './reader.ts';

/**
 * The Centrifugo v6 sections of the stand-alone config beyond channels and tokens: proxies (`client.proxy`,
 * `channel.proxy`, `proxies`, `rpc`) and bidirectional emulation (`http_stream`, `sse`, `emulation`). Keys these
 * sections may hold but the engine does not implement (gRPC proxies, TLS to the backend, emulated headers) are
 * reported like every other unknown key.
 */

type Json = Record<string, unknown>;

/** The keys of one Centrifugo `Proxy` this engine reads. */
const PROXY_KEYS = [
  'endpoint',
  'timeout',
  'http_headers',
  'binary_encoding',
  'include_connection_meta',
  'http',
];

function readStatusTransforms(reader: Reader, http: Json, path: string): StatusToCodeTransform[] | undefined {
  const value = http.status_to_code_transforms;
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw new ConfigError(`${path}.status_to_code_transforms must be a list`);
  return value.map((entry, index) => {
    const at = `${path}.status_to_code_transforms[${index}]`;
    if (entry === null || typeof entry !== 'object') throw new ConfigError(`${at} must be an object`);
    reader.checkKeys(entry as Json, at, ['status_code', 'to_error', 'to_disconnect']);
    const transform = entry as StatusToCodeTransform;
    if (typeof transform.status_code !== 'number')
      throw new ConfigError(`${at}.status_code must be a number`);
    return transform;
  });
}

/** Static headers: an object, or Centrifugo's `[{key, value}]` list form. */
function readStaticHeaders(http: Json, path: string): Record<string, string> | undefined {
  const value = http.static_headers;
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) {
    return Object.fromEntries(
      value.map((entry: { key?: unknown; value?: unknown }) => {
        if (typeof entry?.key !== 'string' || typeof entry.value !== 'string') {
          throw new ConfigError(`${path}.static_headers entries must be {"key", "value"} strings`);
        }
        return [entry.key, entry.value];
      }),
    );
  }
  if (typeof value !== 'object') throw new ConfigError(`${path}.static_headers must be an object`);
  return value as Record<string, string>;
}

/** One `Proxy` section; `undefined` when it names no endpoint. */
function readProxy(
  reader: Reader,
  section: Json,
  path: string,
  extraKeys: string[] = [],
): ProxyEndpointOptions | undefined {
  reader.checkKeys(section, path, [...PROXY_KEYS, ...extraKeys]);
  const endpoint = reader.string(section, 'endpoint', path);
  const http = reader.section(section, 'http', path);
  reader.checkKeys(http, `${path}.http`, ['static_headers', 'status_to_code_transforms']);
  if (endpoint === undefined || endpoint === '') return undefined;
  const proxy: ProxyEndpointOptions = { endpoint };
  const timeout = reader.durationMs(section, 'timeout', path);
  if (timeout !== undefined) proxy.timeout = timeout;
  const headers = reader.strings(section, 'http_headers', path);
  if (headers !== undefined) proxy.http_headers = headers;
  const staticHeaders = readStaticHeaders(http, `${path}.http`);
  if (staticHeaders !== undefined) proxy.static_headers = staticHeaders;
  const transforms = readStatusTransforms(reader, http, `${path}.http`);
  if (transforms !== undefined) proxy.status_to_code_transforms = transforms;
  if (reader.bool(section, 'binary_encoding', path)) proxy.binary_encoding = true;
  if (reader.bool(section, 'include_connection_meta', path)) proxy.include_connection_meta = true;
  return proxy;
}

function readRpc(reader: Reader, root: Json, proxy: ProxyOptions): void {
  const rpc = reader.section(root, 'rpc', '');
  reader.checkKeys(rpc, 'rpc', ['proxy', 'without_namespace', 'namespaces', 'namespace_boundary']);
  const defaultProxy = readProxy(reader, reader.section(rpc, 'proxy', 'rpc'), 'rpc.proxy');
  if (defaultProxy !== undefined) proxy.rpc = defaultProxy;
  const routing: RpcProxyRouting = {};
  const withoutNamespace = reader.section(rpc, 'without_namespace', 'rpc');
  reader.checkKeys(withoutNamespace, 'rpc.without_namespace', ['proxy_enabled', 'proxy_name']);
  routing.without_namespace = {
    proxy_enabled: reader.bool(withoutNamespace, 'proxy_enabled', 'rpc.without_namespace') === true,
    proxy_name: reader.string(withoutNamespace, 'proxy_name', 'rpc.without_namespace') ?? 'default',
  };
  const namespaces = rpc.namespaces ?? [];
  if (!Array.isArray(namespaces)) throw new ConfigError('rpc.namespaces must be a list');
  routing.namespaces = namespaces.map((entry: Json, index) => {
    const at = `rpc.namespaces[${index}]`;
    reader.checkKeys(entry, at, ['name', 'proxy_enabled', 'proxy_name']);
    const name = reader.string(entry, 'name', at);
    if (!name) throw new ConfigError(`${at}.name is required`);
    return {
      name,
      proxy_enabled: reader.bool(entry, 'proxy_enabled', at) === true,
      proxy_name: reader.string(entry, 'proxy_name', at) ?? 'default',
    };
  });
  const boundary = reader.string(rpc, 'namespace_boundary', 'rpc');
  if (boundary !== undefined) routing.namespace_boundary = boundary;
  proxy.rpc_routing = routing;
}

/** `client.proxy`, `channel.proxy`, `proxies` and `rpc` into the engine's `proxy` option. */
export function readProxies(reader: Reader, root: Json, options: RealtimeEngineOptions): void {
  const proxy: ProxyOptions = {};
  const clientProxy = reader.section(reader.section(root, 'client', ''), 'proxy', 'client');
  reader.checkKeys(clientProxy, 'client.proxy', ['connect', 'refresh']);
  for (const kind of ['connect', 'refresh'] as const) {
    const section = reader.section(clientProxy, kind, 'client.proxy');
    const read = readProxy(reader, section, `client.proxy.${kind}`, ['enabled']);
    if (read !== undefined && reader.bool(section, 'enabled', `client.proxy.${kind}`)) proxy[kind] = read;
  }
  const channelProxy = reader.section(reader.section(root, 'channel', ''), 'proxy', 'channel');
  reader.checkKeys(channelProxy, 'channel.proxy', ['subscribe', 'publish', 'sub_refresh']);
  for (const kind of ['subscribe', 'publish', 'sub_refresh'] as const) {
    const read = readProxy(
      reader,
      reader.section(channelProxy, kind, 'channel.proxy'),
      `channel.proxy.${kind}`,
    );
    if (read !== undefined) proxy[kind] = read;
  }
  const named = root.proxies ?? [];
  if (!Array.isArray(named)) throw new ConfigError('proxies must be a list');
  for (const [index, entry] of named.entries()) {
    const at = `proxies[${index}]`;
    if (entry === null || typeof entry !== 'object') throw new ConfigError(`${at} must be an object`);
    const name = reader.string(entry as Json, 'name', at);
    if (!name) throw new ConfigError(`${at}.name is required`);
    const read = readProxy(reader, entry as Json, at, ['name']);
    if (read === undefined) throw new ConfigError(`${at}.endpoint is required`);
    proxy.named ??= {};
    proxy.named[name] = read;
  }
  readRpc(reader, root, proxy);
  options.proxy = proxy;
}

/**
 * `http_stream`, `sse` and `emulation`: off unless enabled, as in Centrifugo. The engine has one body limit for all
 * three; when they differ the largest applies (noted in the warnings).
 */
export function readEmulation(reader: Reader, root: Json, options: RealtimeEngineOptions): void {
  const limits: number[] = [];
  for (const name of ['http_stream', 'sse'] as const) {
    const section = reader.section(root, name, '');
    reader.checkKeys(section, name, ['enabled', 'handler_prefix', 'max_request_body_size']);
    const enabled = reader.bool(section, 'enabled', name) === true;
    const prefix = reader.string(section, 'handler_prefix', name);
    const limit = reader.number(section, 'max_request_body_size', name);
    if (limit !== undefined) limits.push(limit);
    if (name === 'http_stream') {
      options.httpStream = enabled;
      if (prefix !== undefined) options.httpStreamPath = prefix;
    } else {
      options.sse = enabled;
      if (prefix !== undefined) options.ssePath = prefix;
    }
  }
  const emulation = reader.section(root, 'emulation', '');
  reader.checkKeys(emulation, 'emulation', ['handler_prefix', 'max_request_body_size']);
  const prefix = reader.string(emulation, 'handler_prefix', 'emulation');
  if (prefix !== undefined) options.emulationPath = prefix;
  const limit = reader.number(emulation, 'max_request_body_size', 'emulation');
  if (limit !== undefined) limits.push(limit);
  if (limits.length > 0) {
    options.emulationMaxRequestBytes = Math.max(...limits);
    if (new Set(limits).size > 1) {
      reader.warnings.push(
        `max_request_body_size: one limit for streams and /emulation, using ${Math.max(...limits)}`,
      );
    }
  }
}
