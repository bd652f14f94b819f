import { type Command, encodeObject, toRawJson, toStreamPosition } from '../protocol/codec.ts';
import { DisconnectCode, ErrorCode } from '../protocol/codes.ts';
import { ClientError, DisconnectError } from '../protocol/errors.ts';
import { proxyConnect } from '../proxy/calls.ts';
import { proxyFailureToClientError } from '../proxy/client.ts';
import { TokenError } from '../tokens/jwt.ts';
import type { ConnectTokenClaims, ServerSubscriptionClaim } from '../tokens/verifier.ts';
import type { ConnectingResult } from './hooks.ts';
import { type ClientSession, SessionState } from './session.ts';
import {
  activateSubscription,
  baseFlags,
  createSubscription,
  establishSubscription,
  type RecoveryRequest,
} from './subscribe.ts';
import type { Subscription } from './subscription.ts';

type ConnectRequest = NonNullable<Command['connect']>;

interface Credentials {
  user: string;
  /** Unix seconds; 0 = never. */
  expireAt: number;
  info: string | undefined;
  meta: unknown;
  subs: Record<string, ServerSubscriptionClaim>;
  data: string | undefined;
  storage: Record<string, unknown> | undefined;
}

function verifyConnectToken(session: ClientSession, token: string): ConnectTokenClaims {
  try {
    return session.host.verifier.verifyConnectToken(token);
  } catch (error) {
    if (error instanceof TokenError) {
      // Expired → 109 so the SDK fetches a new token; anything else is terminal 3500
      // (docs/protocol.md "Connect").
      if (error.code === 'token_expired') throw new ClientError(ErrorCode.tokenExpired);
      session.host.logger.info({ client: session.id, reason: error.message }, 'invalid connection token');
      throw new DisconnectError(DisconnectCode.invalidToken);
    }
    throw error;
  }
}

function applyHookResult(credentials: Partial<Credentials>, result: ConnectingResult): void {
  if (result.user !== undefined) credentials.user = result.user;
  if (result.info !== undefined) credentials.info = toRawJson(result.info);
  if (result.expireAt !== undefined) credentials.expireAt = result.expireAt;
  if (result.meta !== undefined) credentials.meta = result.meta;
  if (result.data !== undefined) credentials.data = toRawJson(result.data);
  if (result.storage !== undefined) credentials.storage = result.storage;
  if (result.channels !== undefined) {
    credentials.subs ??= {};
    for (const channel of result.channels) credentials.subs[channel] ??= {};
  }
}

/** Token, then `onConnecting`, then the anonymous switches (CFGO `OnClientConnecting`). */
async function resolveCredentials(session: ClientSession, request: ConnectRequest): Promise<Credentials> {
  const host = session.host;
  const options = host.options;
  const token = typeof request.token === 'string' ? request.token : '';
  const partial: Partial<Credentials> = {};
  let claims: ConnectTokenClaims | undefined;
  if (token !== '') {
    claims = verifyConnectToken(session, token);
    if (claims.user === '' && options.disallowAnonymousConnectionTokens) {
      throw new DisconnectError(DisconnectCode.permissionDenied);
    }
    partial.user = claims.user;
    partial.expireAt = claims.expireAt;
    partial.info = claims.info;
    partial.meta = claims.meta;
    partial.subs = { ...claims.subs };
  }
  const hook = host.hooks.onConnecting;
  const proxy = options.proxies.connect;
  // The connect proxy decides connections without a token; an `onConnecting` hook takes precedence over it.
  if (token === '' && hook === undefined && proxy !== undefined) {
    const proxied = await proxyConnect(proxy, session, {
      data: request.data === undefined ? undefined : JSON.stringify(request.data),
      name: session.clientName,
      version: session.clientVersion,
    }).catch((error: unknown) => {
      throw proxyFailureToClientError(error);
    });
    if (proxied !== undefined) {
      partial.user = proxied.user;
      partial.expireAt = proxied.expireAt;
      partial.info = proxied.info;
      partial.data = proxied.data;
      partial.meta = proxied.meta;
      partial.subs = proxied.subs;
    }
  }
  if (hook !== undefined) {
    const result = await hook({
      clientId: session.id,
      request: session.request!,
      origin: session.origin,
      token: claims,
      data: request.data,
      clientName: session.clientName,
      clientVersion: session.clientVersion,
    });
    if (result) applyHookResult(partial, result);
  }
  if (partial.user === undefined) {
    if (!options.allowAnonymousConnectWithoutToken && !options.insecure) {
      host.logger.info({ client: session.id }, 'client credentials not found');
      throw new DisconnectError(DisconnectCode.badRequest);
    }
    partial.user = '';
  }
  return {
    user: partial.user,
    expireAt: options.insecure ? 0 : (partial.expireAt ?? 0),
    info: partial.info,
    meta: partial.meta,
    subs: partial.subs ?? {},
    data: partial.data,
    storage: partial.storage,
  };
}

function recoveryFor(request: ConnectRequest, channel: string): RecoveryRequest {
  const entry = request.subs?.[channel];
  return {
    recover: entry?.recover === true,
    ...toStreamPosition(entry),
    flag: 0,
  };
}

/** Server-side subscriptions from the token or hook; an unknown namespace fails the connect with 102 (CFGO). */
function prepareServerSubscriptions(
  session: ClientSession,
  subs: Record<string, ServerSubscriptionClaim>,
): Subscription[] {
  const registry = session.host.registry;
  const result: Subscription[] = [];
  for (const [channel, claim] of Object.entries(subs)) {
    const resolved = registry.resolve(channel);
    if (resolved === undefined) throw new ClientError(ErrorCode.unknownChannel);
    const grant = {
      flags: baseFlags(resolved.options, claim.override),
      expireAt: 0,
      chanInfo: claim.info,
      data: claim.data,
    };
    result.push(createSubscription(session, channel, resolved.options, grant, true));
  }
  return result;
}

export async function handleConnect(
  session: ClientSession,
  id: number,
  request: ConnectRequest,
): Promise<void> {
  const host = session.host;
  if (typeof request !== 'object') throw new DisconnectError(DisconnectCode.badRequest);
  session.clientName = typeof request.name === 'string' ? request.name.slice(0, 16) : '';
  session.clientVersion = typeof request.version === 'string' ? request.version.slice(0, 64) : '';
  const credentials = await resolveCredentials(session, request);
  if (session.state !== SessionState.Connecting) return;
  const nowSeconds = Date.now() / 1000;
  // Valid credentials whose expiry already passed: 110, terminal for the SDK (LIB connectCmd).
  if (credentials.expireAt > 0 && credentials.expireAt <= nowSeconds)
    throw new ClientError(ErrorCode.expired);
  const nodeLimit = host.options.connectionLimit;
  if (nodeLimit > 0 && host.hub.numClients >= nodeLimit)
    throw new DisconnectError(DisconnectCode.connectionLimit);
  const limit = host.options.userConnectionLimit;
  if (limit > 0 && credentials.user !== '' && (host.hub.userSessions(credentials.user)?.size ?? 0) >= limit) {
    throw new DisconnectError(DisconnectCode.connectionLimit);
  }
  session.user = credentials.user;
  session.connInfo = credentials.info;
  session.meta = credentials.meta;
  if (credentials.storage !== undefined) session.storage = credentials.storage;
  session.expireAt = credentials.expireAt * 1000;
  const serverSubs = prepareServerSubscriptions(session, credentials.subs);
  host.hub.addClient(session);
  session.markConnected(Date.now());
  const subResults: string[] = [];
  try {
    for (const sub of serverSubs) {
      session.subs.set(sub.channel, sub);
      const grant = {
        flags: sub.flags,
        expireAt: 0,
        chanInfo: sub.chanInfo,
        data: credentials.subs[sub.channel]?.data,
      };
      const json = await establishSubscription(session, sub, grant, recoveryFor(request, sub.channel));
      subResults.push(`${JSON.stringify(sub.channel)}:${json}`);
    }
  } catch (error) {
    if (session.closed) return;
    // The connection cannot be set up half-way: drop it with a reconnect code.
    host.logger.error({ client: session.id, error: String(error) }, 'server-side subscription failed');
    session.disconnect(DisconnectCode.serverError);
    return;
  }
  const result: Record<string, string | undefined> = {
    client: JSON.stringify(session.id),
    version: JSON.stringify(host.options.serverVersion),
  };
  // With a refresh proxy the server renews the connection itself: the client is not asked to (Centrifugo).
  if (session.expireAt > 0 && host.options.proxies.refresh === undefined) {
    result.expires = 'true';
    result.ttl = String(Math.max(1, Math.floor(credentials.expireAt - nowSeconds)));
  }
  if (credentials.data !== undefined) result.data = credentials.data;
  if (subResults.length > 0) result.subs = `{${subResults.join(',')}}`;
  const { pingIntervalMs, pongTimeoutMs } = host.options;
  if (pingIntervalMs > 0) {
    result.ping = String(Math.round(pingIntervalMs / 1000));
    if (pongTimeoutMs > 0) result.pong = 'true';
  }
  // Emulation: the client names its session and the node holding it in every `/emulation` request.
  if (session.sessionId !== undefined) {
    result.session = JSON.stringify(session.sessionId);
    result.node = JSON.stringify(host.nodeId);
  }
  session.reply(id, 'connect', encodeObject(result));
  for (const sub of serverSubs) activateSubscription(session, sub);
  host.emitEvent('onConnect', session);
}
