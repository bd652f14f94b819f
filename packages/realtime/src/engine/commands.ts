import type { ClientInfo } from '../broker/types.ts';
import {
  type Command,
  type CommandMethod,
  encodeObject,
  encodePresence,
  encodePublications,
  toRawJson,
  toStreamPosition,
} from '../protocol/codec.ts';
import {
  DisconnectCode,
  ErrorCode,
  UNAVAILABLE_ERROR_CODE,
  UnsubscribeCode,
  unsubscribeReason,
} from '../protocol/codes.ts';
import { ClientError, DisconnectError } from '../protocol/errors.ts';
import { proxyPublish, proxyRpc } from '../proxy/calls.ts';
import { proxyFailureToClientError } from '../proxy/client.ts';
import { TokenError } from '../tokens/jwt.ts';
import { handleConnect } from './connect.ts';
import { isValidPublicationData } from './namespaces.ts';
import { canPublish, canReadHistory, canReadPresence, isSubscribed, resolveChannel } from './permissions.ts';
import { type ClientSession, SessionState } from './session.ts';
import { handleSubscribe } from './subscribe.ts';
import { SubscriptionState } from './subscription.ts';

/**
 * Routes one command to its handler (the session's `CommandDispatcher`); handlers reply themselves or throw
 * ClientError / DisconnectError.
 */
export async function dispatchCommand(
  session: ClientSession,
  method: CommandMethod,
  id: number,
  command: Command,
): Promise<void> {
  switch (method) {
    case 'connect':
      return handleConnect(session, id, command.connect!);
    case 'subscribe':
      return handleSubscribe(session, id, objectOrBadRequest(command.subscribe));
    case 'unsubscribe':
      return handleUnsubscribe(session, id, objectOrBadRequest(command.unsubscribe));
    case 'publish':
      return handlePublish(session, id, objectOrBadRequest(command.publish));
    case 'history':
      return handleHistory(session, id, objectOrBadRequest(command.history));
    case 'presence':
      return handlePresence(session, id, objectOrBadRequest(command.presence), false);
    case 'presence_stats':
      return handlePresence(session, id, objectOrBadRequest(command.presence_stats), true);
    case 'rpc':
      return handleRpc(session, id, objectOrBadRequest(command.rpc));
    case 'send':
      return handleSend(session, objectOrBadRequest(command.send));
    case 'refresh':
      return handleRefresh(session, id, objectOrBadRequest(command.refresh));
    case 'sub_refresh':
      return handleSubRefresh(session, id, objectOrBadRequest(command.sub_refresh));
    case 'ping':
      // Not part of protocol v2; the Go server answers 108 (LIB handlePing).
      throw new ClientError(ErrorCode.notAvailable);
  }
}

function objectOrBadRequest<T>(value: T | undefined): T {
  if (value === null || typeof value !== 'object') throw new DisconnectError(DisconnectCode.badRequest);
  return value as T;
}

/** A channel field that must be a non-empty string; missing → close 3501 like the Go server. */
function requireChannel(channel: unknown): string {
  if (typeof channel !== 'string' || channel === '') throw new DisconnectError(DisconnectCode.badRequest);
  return channel;
}

function handleUnsubscribe(
  session: ClientSession,
  id: number,
  request: NonNullable<Command['unsubscribe']>,
): void {
  const channel = requireChannel(request.channel);
  const sub = session.subs.get(channel);
  if (sub !== undefined) {
    session.subs.delete(channel);
    session.host.finishSubscription(sub, {
      code: UnsubscribeCode.client,
      reason: unsubscribeReason(UnsubscribeCode.client),
    });
  }
  // Success even when not subscribed (LIB unsubscribe).
  session.reply(id, 'unsubscribe', '{}');
}

/** ClientInfo of a connection outside any channel (connection info only). */
function connectionInfo(session: ClientSession): ClientInfo {
  const info: ClientInfo = { user: session.user, client: session.id };
  if (session.connInfo !== undefined) info.connInfo = session.connInfo;
  return info;
}

/**
 * Client publish (CFGO OnPublish + our `onPublish` hook): validate, let the application check or transform,
 * publish through the broker with the publisher's ClientInfo, and reply only after both finished.
 */
async function handlePublish(
  session: ClientSession,
  id: number,
  request: NonNullable<Command['publish']>,
): Promise<void> {
  const host = session.host;
  const channel = requireChannel(request.channel);
  const { options } = resolveChannel(session, channel);
  let rawData = request.data === undefined ? '' : JSON.stringify(request.data);
  if (!isValidPublicationData(rawData, options.publicationDataFormat))
    throw new ClientError(ErrorCode.badRequest);
  const subscribed = isSubscribed(session, channel);
  const hook = host.hooks.onPublish;
  // The namespace's publish proxy replaces the `allow_publish_*` rules (Centrifugo); an `onPublish` hook wins over it.
  const proxy =
    hook === undefined ? host.options.proxies.channelProxy('publish', options.proxies.publish) : undefined;
  if (proxy === undefined && !canPublish(session, options, subscribed)) {
    // Sent before the client read our 2500 push (its subscription is being re-established): retry, not refusal.
    if (session.isResubscribing(channel)) throw new ClientError(UNAVAILABLE_ERROR_CODE, 'resubscribing');
    throw new ClientError(ErrorCode.permissionDenied);
  }
  let skipHistory = false;
  let delta = false;
  let tags: Record<string, string> | undefined;
  let idempotencyKey: string | undefined;
  if (proxy !== undefined) {
    const decision = await proxyPublish(proxy, session, { channel, data: rawData }).catch(
      (error: unknown) => {
        throw proxyFailureToClientError(error);
      },
    );
    if (session.state === SessionState.Closed) return;
    if (decision.data !== undefined) rawData = decision.data;
    skipHistory = decision.skipHistory;
    delta = decision.delta;
    tags = decision.tags;
    idempotencyKey = decision.idempotencyKey;
  }
  if (hook !== undefined) {
    const decision = await hook({ client: session, channel, data: request.data });
    if (session.state === SessionState.Closed) return;
    if (decision?.skip) {
      session.reply(id, 'publish', '{}');
      return;
    }
    if (decision !== undefined && 'data' in decision) rawData = JSON.stringify(decision.data ?? null);
    skipHistory = decision?.skipHistory === true;
    tags = decision?.tags;
    idempotencyKey = decision?.idempotencyKey;
  }
  const sub = session.subs.get(channel);
  const info =
    sub !== undefined && sub.state === SubscriptionState.Subscribed ? sub.info() : connectionInfo(session);
  await host.publishRaw({
    channel,
    data: rawData,
    info,
    options,
    skipHistory,
    ...(delta ? { delta } : {}),
    ...(tags !== undefined ? { tags } : {}),
    ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
  });
  session.reply(id, 'publish', '{}');
}

/** Client history (LIB handleHistory, node.history): limit 0 = position only, capped, 107 / 108 / 112 rules. */
async function handleHistory(
  session: ClientSession,
  id: number,
  request: NonNullable<Command['history']>,
): Promise<void> {
  const host = session.host;
  const channel = requireChannel(request.channel);
  const { options } = resolveChannel(session, channel);
  if (options.history === undefined) throw new ClientError(ErrorCode.notAvailable);
  if (!canReadHistory(session, options, isSubscribed(session, channel))) {
    throw new ClientError(ErrorCode.permissionDenied);
  }
  const max = host.options.historyMaxPublicationLimit;
  let limit = typeof request.limit === 'number' && Number.isInteger(request.limit) ? request.limit : 0;
  if (limit < 0 || limit > max) limit = max;
  const since =
    request.since !== null && typeof request.since === 'object' ? toStreamPosition(request.since) : undefined;
  const reverse = request.reverse === true;
  const result = await host.readHistory(channel, options, { since, limit, reverse });
  // All three always written, as Centrifugo does (src/protocol/json-always.ts).
  session.reply(
    id,
    'history',
    `{"publications":${encodePublications(result.publications)},"epoch":${JSON.stringify(result.position.epoch)},"offset":${result.position.offset}}`,
  );
}

async function handlePresence(
  session: ClientSession,
  id: number,
  request: { channel?: string },
  statsOnly: boolean,
): Promise<void> {
  const host = session.host;
  const channel = requireChannel(request.channel);
  const { options } = resolveChannel(session, channel);
  if (!options.presence) throw new ClientError(ErrorCode.notAvailable);
  if (!canReadPresence(session, options, isSubscribed(session, channel))) {
    throw new ClientError(ErrorCode.permissionDenied);
  }
  if (statsOnly) {
    const stats = await host.presenceManager.presenceStats(channel);
    // Zeros included, as Centrifugo writes them (src/protocol/json-always.ts).
    session.reply(id, 'presence_stats', `{"num_clients":${stats.numClients},"num_users":${stats.numUsers}}`);
    return;
  }
  session.reply(
    id,
    'presence',
    `{"presence":${encodePresence(await host.presenceManager.presence(channel))}}`,
  );
}

async function handleRpc(
  session: ClientSession,
  id: number,
  request: NonNullable<Command['rpc']>,
): Promise<void> {
  const hook = session.host.hooks.onRpc;
  const method = typeof request.method === 'string' ? request.method : '';
  if (hook !== undefined) {
    const data = await hook({ client: session, method, data: request.data });
    if (session.state === SessionState.Closed) return;
    session.reply(id, 'rpc', encodeObject({ data: toRawJson(data) }));
    return;
  }
  // The method's RPC namespace decides: an unknown one → 104, one without a proxy → 108 (docs/protocol.md "Proxies").
  const proxy = session.host.options.proxies.rpcProxy(method);
  if (proxy === null) throw new ClientError(ErrorCode.methodNotFound);
  if (proxy === undefined) throw new ClientError(ErrorCode.notAvailable);
  const data = await proxyRpc(proxy, session, { method, data: toRawJson(request.data) }).catch(
    (error: unknown) => {
      throw proxyFailureToClientError(error);
    },
  );
  if (session.state === SessionState.Closed) return;
  session.reply(id, 'rpc', encodeObject({ data }));
}

async function handleSend(session: ClientSession, request: NonNullable<Command['send']>): Promise<void> {
  const hook = session.host.hooks.onMessage;
  // No message handler → 3508 "not available", terminal (LIB handleSend).
  if (hook === undefined) throw new DisconnectError(DisconnectCode.notAvailable);
  await hook({ client: session, data: request.data });
}

/** Connection refresh (CFGO OnRefresh): same user, new expiry; expired → 3005, invalid → 3500. */
async function handleRefresh(
  session: ClientSession,
  id: number,
  request: NonNullable<Command['refresh']>,
): Promise<void> {
  const host = session.host;
  const token = typeof request.token === 'string' ? request.token : '';
  if (token === '') throw new DisconnectError(DisconnectCode.badRequest);
  let claims: ReturnType<typeof host.verifier.verifyConnectToken>;
  try {
    claims = host.verifier.verifyConnectToken(token);
  } catch (error) {
    if (error instanceof TokenError) {
      throw new DisconnectError(
        error.code === 'token_expired' ? DisconnectCode.expired : DisconnectCode.invalidToken,
      );
    }
    throw error;
  }
  if (claims.user !== session.user) throw new DisconnectError(DisconnectCode.invalidToken);
  const expireAt = host.options.insecure ? 0 : claims.expireAt;
  const nowSeconds = Date.now() / 1000;
  if (expireAt > 0 && expireAt <= nowSeconds) throw new DisconnectError(DisconnectCode.expired);
  session.expireAt = expireAt * 1000;
  if (claims.info !== undefined && claims.info !== session.connInfo) {
    session.connInfo = claims.info;
    for (const sub of session.subs.values()) sub.resetInfo();
  }
  if (claims.meta !== undefined) session.meta = claims.meta;
  session.reschedule(Date.now());
  session.reply(
    id,
    'refresh',
    encodeObject({
      client: JSON.stringify(session.id),
      version: JSON.stringify(host.options.serverVersion),
      expires: expireAt > 0 ? 'true' : undefined,
      ttl: expireAt > 0 ? String(Math.max(1, Math.floor(expireAt - nowSeconds))) : undefined,
    }),
  );
}

/** Subscription refresh (CFGO OnSubRefresh); an expired token answers 109 instead of the Go lib's silent `{}`. */
async function handleSubRefresh(
  session: ClientSession,
  id: number,
  request: NonNullable<Command['sub_refresh']>,
): Promise<void> {
  const host = session.host;
  const channel = requireChannel(request.channel);
  const token = typeof request.token === 'string' ? request.token : '';
  const sub = session.subs.get(channel);
  if (sub === undefined || sub.state !== SubscriptionState.Subscribed)
    throw new ClientError(ErrorCode.permissionDenied);
  if (token === '') throw new DisconnectError(DisconnectCode.badRequest);
  let claims: ReturnType<typeof host.verifier.verifySubscribeToken>;
  try {
    claims = host.verifier.verifySubscribeToken(token);
  } catch (error) {
    if (error instanceof TokenError) {
      if (error.code === 'token_expired') throw new ClientError(ErrorCode.tokenExpired);
      throw new DisconnectError(DisconnectCode.invalidToken);
    }
    throw error;
  }
  if (claims.channel !== channel || claims.user !== session.user)
    throw new DisconnectError(DisconnectCode.invalidToken);
  if (claims.client !== undefined && claims.client !== session.id)
    throw new DisconnectError(DisconnectCode.invalidToken);
  const expireAt = host.options.insecure ? 0 : claims.expireAt;
  const nowSeconds = Date.now() / 1000;
  if (expireAt > 0 && expireAt <= nowSeconds) throw new ClientError(ErrorCode.expired);
  sub.expireAt = expireAt * 1000;
  if (claims.info !== undefined && claims.info !== sub.chanInfo) {
    sub.chanInfo = claims.info;
    sub.resetInfo();
  }
  session.reschedule(Date.now());
  session.reply(
    id,
    'sub_refresh',
    encodeObject({
      expires: expireAt > 0 ? 'true' : undefined,
      ttl: expireAt > 0 ? String(Math.max(1, Math.floor(expireAt - nowSeconds))) : undefined,
    }),
  );
}
