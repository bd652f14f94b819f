import type { StreamPosition } from '../broker/types.ts';
import { encodeObject } from '../protocol/codec.ts';
import { DisconnectCode } from '../protocol/codes.ts';
import type { SubscriptionOverride } from '../tokens/verifier.ts';
import { type ClientSession, SessionState } from './session.ts';
import { activateSubscription, baseFlags, createSubscription, establishSubscription } from './subscribe.ts';

/**
 * What the server API's `subscribe` and `refresh` do to one connection of this node (docs/protocol.md "Server HTTP
 * API"; Centrifugo's `Client.Subscribe` and `Client.Refresh`): the cluster applies them to every connection of the
 * user named, on every node.
 */

/** `subscribe` of the server API, as it reaches each node. */
export interface ServerSubscribeRequest {
  channel: string;
  /** Raw JSON for the `subscribe` push `data`. */
  data?: string;
  /** Raw JSON that becomes `chan_info`. */
  info?: string;
  /** Unix seconds; 0 = never. */
  expireAt?: number;
  override?: SubscriptionOverride;
  /** Recover publications after this position (the client's own position is unknown to the server API). */
  recoverSince?: StreamPosition;
}

/**
 * Subscribes the connection to `channel` server-side and tells it with a `subscribe` push, which the client turns
 * into a server-side subscription. Already subscribed → nothing; over `channelLimit` → close 3505 (Centrifugo).
 */
export async function subscribeServerSide(
  session: ClientSession,
  request: ServerSubscribeRequest,
): Promise<void> {
  const host = session.host;
  if (session.state !== SessionState.Connected || session.subs.has(request.channel)) return;
  if (session.subs.size >= host.options.channelLimit) {
    session.disconnect(DisconnectCode.channelLimit);
    return;
  }
  const resolved = host.registry.resolve(request.channel);
  if (resolved === undefined) return;
  const grant = {
    flags: baseFlags(resolved.options, request.override),
    expireAt: request.expireAt ?? 0,
    chanInfo: request.info,
    data: request.data,
  };
  const sub = createSubscription(session, request.channel, resolved.options, grant, true);
  session.subs.set(request.channel, sub);
  const since = request.recoverSince;
  let resultJson: string;
  try {
    resultJson = await establishSubscription(session, sub, grant, {
      recover: since !== undefined,
      offset: since?.offset ?? 0,
      epoch: since?.epoch ?? '',
      flag: 0,
    });
  } catch (error) {
    if (session.subs.get(request.channel) === sub) session.subs.delete(request.channel);
    host.finishSubscription(sub, undefined);
    if (!session.closed)
      host.logger.warn({ channel: request.channel, error: String(error) }, 'server subscribe failed');
    return;
  }
  // The `Subscribe` push carries the position fields of the subscribe result and its data.
  const result = JSON.parse(resultJson) as Record<string, unknown>;
  const push = encodeObject({
    recoverable: result.recoverable === true ? 'true' : undefined,
    epoch: typeof result.epoch === 'string' ? JSON.stringify(result.epoch) : undefined,
    offset: typeof result.offset === 'number' ? String(result.offset) : undefined,
    positioned: result.positioned === true ? 'true' : undefined,
    data: request.data,
  });
  session.enqueue(`{"push":{"channel":${JSON.stringify(request.channel)},"subscribe":${push}}}`);
  activateSubscription(session, sub);
}

/** `refresh` of the server API, as it reaches each node. */
export interface ServerRefreshRequest {
  /** The connection expired now: close it with 3005. */
  expired?: boolean;
  /** New expiry in unix seconds; 0 (or absent) = never expires. */
  expireAt?: number;
  /** Raw JSON: the new `conn_info`. */
  info?: string;
}

/**
 * Renews (or ends) the connection's credentials from the server side, as a refresh proxy would: `expired` or an
 * expiry already past closes with 3005; otherwise the new expiry and info apply and a `refresh` push says so.
 */
export function refreshServerSide(session: ClientSession, request: ServerRefreshRequest): void {
  if (session.state !== SessionState.Connected) return;
  const nowSeconds = Math.floor(Date.now() / 1000);
  const expireAt = request.expireAt ?? 0;
  if (request.expired === true || (expireAt > 0 && expireAt <= nowSeconds)) {
    session.disconnect(DisconnectCode.expired);
    return;
  }
  session.expireAt = expireAt * 1000;
  if (request.info !== undefined && request.info !== session.connInfo) {
    session.connInfo = request.info;
    for (const sub of session.subs.values()) sub.resetInfo();
  }
  session.reschedule(Date.now());
  const refresh = encodeObject({
    expires: expireAt > 0 ? 'true' : undefined,
    ttl: expireAt > 0 ? String(expireAt - nowSeconds) : undefined,
  });
  session.enqueue(`{"push":{"refresh":${refresh}}}`);
}
