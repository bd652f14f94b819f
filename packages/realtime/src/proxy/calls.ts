import type { IncomingHttpHeaders } from 'node:http';
import { TokenError } from '../tokens/jwt.ts';
import {
  parseOverride,
  type ServerSubscriptionClaim,
  type SubscriptionOverride,
} from '../tokens/verifier.ts';
import { callProxy, ProxyFailure, payloadField, rawJsonField } from './client.ts';
import type { ResolvedProxyEndpoint } from './options.ts';

/**
 * The six proxy calls with Centrifugo v6's payloads (docs/protocol.md "Proxies"): each builds the request from the
 * connection and reads the result into what the engine applies. Every request carries `client`, `transport`,
 * `protocol` and `encoding`; all but connect carry `user`, and `meta` with `include_connection_meta`.
 */

/** What a proxy call needs to know about the connection. */
export interface ProxiedConnection {
  readonly id: string;
  readonly user: string;
  readonly meta: unknown;
  readonly transport: { readonly name: string };
  readonly codec: { readonly name: string };
  /** Headers of the client's HTTP request, kept for `http_headers`. */
  readonly proxyHeaders: IncomingHttpHeaders | undefined;
}

function base(
  connection: ProxiedConnection,
  endpoint: ResolvedProxyEndpoint,
  withUser = true,
): Record<string, unknown> {
  const request: Record<string, unknown> = {
    client: connection.id,
    transport: connection.transport.name,
    protocol: connection.codec.name,
    encoding: endpoint.binaryEncoding ? 'binary' : 'json',
  };
  if (withUser) request.user = connection.user;
  if (withUser && endpoint.includeMeta && connection.meta !== undefined) request.meta = connection.meta;
  return request;
}

function call(
  endpoint: ResolvedProxyEndpoint,
  connection: ProxiedConnection,
  body: Record<string, unknown>,
): Promise<Record<string, unknown> | undefined> {
  return callProxy(endpoint, connection.proxyHeaders, body);
}

/** The subscribe and publish proxies' request: the channel and the client's data; an empty result reads as `{}`. */
async function callForChannel(
  endpoint: ResolvedProxyEndpoint,
  connection: ProxiedConnection,
  request: { channel: string; data: string | undefined },
): Promise<Record<string, unknown>> {
  const result = await call(endpoint, connection, {
    ...base(connection, endpoint),
    channel: request.channel,
    ...payloadField(endpoint, 'data', request.data),
  });
  return result ?? {};
}

const int = (value: unknown): number => (typeof value === 'number' && Number.isInteger(value) ? value : 0);

function override(value: unknown): SubscriptionOverride | undefined {
  try {
    return parseOverride(value);
  } catch (error) {
    if (error instanceof TokenError) throw new ProxyFailure(`proxy result override: ${error.message}`);
    throw error;
  }
}

export interface ProxiedCredentials {
  user: string;
  expireAt: number;
  info: string | undefined;
  data: string | undefined;
  meta: unknown;
  subs: Record<string, ServerSubscriptionClaim>;
}

/** Connect proxy: credentials for a connection that came without a token; `undefined` when the result is empty. */
export async function proxyConnect(
  endpoint: ResolvedProxyEndpoint,
  connection: ProxiedConnection,
  request: { data: string | undefined; name: string; version: string },
): Promise<ProxiedCredentials | undefined> {
  const result = await call(endpoint, connection, {
    ...base(connection, endpoint, false),
    ...payloadField(endpoint, 'data', request.data),
    name: request.name,
    version: request.version,
  });
  if (result === undefined) return undefined;
  const subs: Record<string, ServerSubscriptionClaim> = {};
  if (Array.isArray(result.channels)) {
    for (const channel of result.channels) if (typeof channel === 'string') subs[channel] = {};
  }
  if (result.subs !== null && typeof result.subs === 'object') {
    for (const [channel, options] of Object.entries(result.subs as Record<string, Record<string, unknown>>)) {
      const claim: ServerSubscriptionClaim = {};
      const info = rawJsonField(options ?? {}, 'info');
      const data = rawJsonField(options ?? {}, 'data');
      const subOverride = override(options?.override);
      if (info !== undefined) claim.info = info;
      if (data !== undefined) claim.data = data;
      if (subOverride !== undefined) claim.override = subOverride;
      subs[channel] = claim;
    }
  }
  return {
    user: typeof result.user === 'string' ? result.user : '',
    expireAt: int(result.expire_at),
    info: rawJsonField(result, 'info'),
    data: rawJsonField(result, 'data'),
    meta: result.meta,
    subs,
  };
}

/** Refresh and sub_refresh proxies: the connection's or subscription's new expiry, or `expired`. */
export interface ProxiedRefresh {
  expired: boolean;
  /** Unix seconds; 0 = never. */
  expireAt: number;
  info: string | undefined;
}

function readRefresh(result: Record<string, unknown> | undefined): ProxiedRefresh {
  // No result: Centrifugo disconnects the user (`no refresh result found`).
  if (result === undefined) return { expired: true, expireAt: 0, info: undefined };
  return {
    expired: result.expired === true,
    expireAt: int(result.expire_at),
    info: rawJsonField(result, 'info'),
  };
}

export async function proxyRefresh(
  endpoint: ResolvedProxyEndpoint,
  connection: ProxiedConnection,
): Promise<ProxiedRefresh> {
  return readRefresh(await call(endpoint, connection, base(connection, endpoint)));
}

export async function proxySubRefresh(
  endpoint: ResolvedProxyEndpoint,
  connection: ProxiedConnection,
  channel: string,
): Promise<ProxiedRefresh> {
  return readRefresh(await call(endpoint, connection, { ...base(connection, endpoint), channel }));
}

export interface ProxiedSubscribe {
  info: string | undefined;
  data: string | undefined;
  override: SubscriptionOverride | undefined;
  expireAt: number;
}

/** Subscribe proxy: admits a subscription that came without a token (its error or disconnect refuse it). */
export async function proxySubscribe(
  endpoint: ResolvedProxyEndpoint,
  connection: ProxiedConnection,
  request: { channel: string; data: string | undefined },
): Promise<ProxiedSubscribe> {
  const result = await callForChannel(endpoint, connection, request);
  return {
    info: rawJsonField(result, 'info'),
    data: rawJsonField(result, 'data'),
    override: override(result.override),
    expireAt: int(result.expire_at),
  };
}

export interface ProxiedPublish {
  /** Raw JSON replacing the client's data. */
  data: string | undefined;
  skipHistory: boolean;
  tags: Record<string, string> | undefined;
  idempotencyKey: string | undefined;
  delta: boolean;
}

/** Publish proxy: decides a client publication before it is broadcast, and may replace its data. */
export async function proxyPublish(
  endpoint: ResolvedProxyEndpoint,
  connection: ProxiedConnection,
  request: { channel: string; data: string },
): Promise<ProxiedPublish> {
  const result = await callForChannel(endpoint, connection, request);
  const tags = result.tags;
  return {
    data: rawJsonField(result, 'data'),
    skipHistory: result.skip_history === true,
    tags:
      tags !== null && typeof tags === 'object' && !Array.isArray(tags)
        ? (tags as Record<string, string>)
        : undefined,
    idempotencyKey: typeof result.idempotency_key === 'string' ? result.idempotency_key : undefined,
    delta: result.delta === true,
  };
}

/** RPC proxy: the reply `data` (raw JSON) of a client RPC. */
export async function proxyRpc(
  endpoint: ResolvedProxyEndpoint,
  connection: ProxiedConnection,
  request: { method: string; data: string | undefined },
): Promise<string | undefined> {
  const result = await call(endpoint, connection, {
    ...base(connection, endpoint),
    method: request.method,
    ...payloadField(endpoint, 'data', request.data),
  });
  return result === undefined ? undefined : rawJsonField(result, 'data');
}
