import type { Publication, StreamPosition } from '../broker/types.ts';
import {
  type Command,
  encodeObject,
  encodePublicationPush,
  encodePublications,
  toStreamPosition,
} from '../protocol/codec.ts';
import { DisconnectCode, ErrorCode } from '../protocol/codes.ts';
import { ClientError, DisconnectError } from '../protocol/errors.ts';
import { proxySubscribe } from '../proxy/calls.ts';
import { proxyFailureToClientError } from '../proxy/client.ts';
import { TokenError } from '../tokens/jwt.ts';
import type { SubscriptionOverride } from '../tokens/verifier.ts';
import { DeltaPushes } from './delta.ts';
import { advancePosition, PositionVerdict } from './hub.ts';
import type { ResolvedChannelOptions } from './namespaces.ts';
import { canReadHistory, canReadPresence, resolveChannel } from './permissions.ts';
import type { ClientSession } from './session.ts';
import { Subscription, type SubscriptionFlags, SubscriptionState } from './subscription.ts';

/**
 * Subscribe flag bit 2: reject with 112 instead of answering `recovered: false`
 * (docs/protocol.md "Recovery").
 */
const FLAG_REJECT_UNRECOVERED = 2;

export interface RecoveryRequest {
  recover: boolean;
  offset: number;
  epoch: string;
  flag: number;
}

export interface SubscriptionGrant {
  flags: SubscriptionFlags;
  /** Unix seconds; 0 = never. */
  expireAt: number;
  chanInfo: string | undefined;
  /** Raw JSON for the subscribe result `data`. */
  data: string | undefined;
}

/** Namespace defaults with token overrides applied (CFGO VerifySubscribeToken / VerifyConnectToken). */
export function baseFlags(
  options: ResolvedChannelOptions,
  override: SubscriptionOverride | undefined,
): SubscriptionFlags {
  const recovery = override?.forceRecovery ?? options.forceRecovery;
  return {
    presence: override?.presence ?? options.presence,
    joinLeave: override?.joinLeave ?? options.joinLeave,
    pushJoinLeave: override?.forcePushJoinLeave ?? options.forcePushJoinLeave,
    positioned: (override?.forcePositioning ?? options.forcePositioning) || recovery,
    recoverable: recovery,
  };
}

function tokenError(error: unknown): never {
  if (error instanceof TokenError) {
    throw new ClientError(
      error.code === 'token_expired' ? ErrorCode.tokenExpired : ErrorCode.permissionDenied,
    );
  }
  throw error;
}

/**
 * Decides whether and how a client may subscribe (CFGO `OnSubscribe`), or throws the reply error / disconnect: a
 * token; else the namespace's subscribe proxy (docs/protocol.md "Proxies"); else the namespace's rules.
 */
async function authorizeSubscribe(
  session: ClientSession,
  channel: string,
  options: ResolvedChannelOptions,
  request: NonNullable<Command['subscribe']>,
): Promise<SubscriptionGrant> {
  const { registry, verifier } = session.host;
  const token = typeof request.token === 'string' ? request.token : '';
  const isUserLimited = options.userLimitedChannels && registry.isUserLimited(channel);
  if (registry.isPrivate(channel) && token === '') throw new ClientError(ErrorCode.permissionDenied);
  const grant: SubscriptionGrant = {
    flags: baseFlags(options, undefined),
    expireAt: 0,
    chanInfo: undefined,
    data: undefined,
  };
  if (token !== '') {
    let claims: ReturnType<typeof verifier.verifySubscribeToken>;
    try {
      claims = verifier.verifySubscribeToken(token);
    } catch (error) {
      tokenError(error);
    }
    // A token for another channel, user or client is an attack, not a mistake: close 3500
    // (docs/protocol.md "Subscription token").
    if (claims.channel !== channel || claims.user !== session.user) {
      throw new DisconnectError(DisconnectCode.invalidToken);
    }
    if (claims.client !== undefined && claims.client !== session.id) {
      throw new DisconnectError(DisconnectCode.invalidToken);
    }
    grant.flags = baseFlags(options, claims.override);
    grant.expireAt = session.host.options.insecure ? 0 : claims.expireAt;
    grant.chanInfo = claims.info;
    grant.data = claims.data;
  } else if (options.proxies.subscribe !== undefined) {
    const proxy = session.host.options.proxies.channelProxy('subscribe', options.proxies.subscribe)!;
    const proxied = await proxySubscribe(proxy, session, {
      channel,
      data: request.data === undefined ? undefined : JSON.stringify(request.data),
    }).catch((error: unknown) => {
      throw proxyFailureToClientError(error);
    });
    grant.flags = baseFlags(options, proxied.override);
    grant.expireAt = session.host.options.insecure ? 0 : proxied.expireAt;
    grant.chanInfo = proxied.info;
    grant.data = proxied.data;
  } else if (isUserLimited && registry.userAllowed(channel, session.user)) {
    // user-limited channel listing this user
  } else if (
    options.subscribeForClient &&
    (session.user !== '' || options.subscribeForAnonymous) &&
    !isUserLimited
  ) {
    // namespace allows it
  } else if (!session.host.options.insecure) {
    throw new ClientError(ErrorCode.permissionDenied);
  }
  // Client-requested extras need the namespace switch or history/presence rights (CFGO OnSubscribe).
  if (request.positioned === true && (options.allowPositioning || canReadHistory(session, options, true))) {
    grant.flags.positioned = true;
  }
  if (request.recoverable === true && (options.allowRecovery || canReadHistory(session, options, true))) {
    grant.flags.recoverable = true;
    grant.flags.positioned = true;
  }
  if (request.join_leave === true && options.joinLeave && canReadPresence(session, options, true)) {
    grant.flags.pushJoinLeave = true;
  }
  return grant;
}

export async function handleSubscribe(
  session: ClientSession,
  id: number,
  request: NonNullable<Command['subscribe']>,
): Promise<void> {
  const host = session.host;
  const channel = request.channel;
  if (typeof channel !== 'string' || channel === '') throw new DisconnectError(DisconnectCode.badRequest);
  if (session.subs.has(channel)) throw new ClientError(ErrorCode.alreadySubscribed);
  if (session.subs.size >= host.options.channelLimit) throw new ClientError(ErrorCode.limitExceeded);
  const resolved = resolveChannel(session, channel);
  const grant = await authorizeSubscribe(session, channel, resolved.options, request);
  if (session.closed) return;
  // The proxy call may have let a second subscribe to the same channel through meanwhile.
  if (session.subs.has(channel)) throw new ClientError(ErrorCode.alreadySubscribed);
  const sub = createSubscription(session, channel, resolved.options, grant, false);
  sub.delta = negotiateDelta(request.delta, resolved.options);
  const recovery: RecoveryRequest = {
    recover: request.recover === true,
    ...toStreamPosition(request),
    flag: typeof request.flag === 'number' ? request.flag : 0,
  };
  session.subs.set(channel, sub);
  let resultJson: string;
  try {
    resultJson = await establishSubscription(session, sub, grant, recovery);
  } catch (error) {
    if (session.subs.get(channel) === sub) session.subs.delete(channel);
    host.finishSubscription(sub, undefined);
    throw error;
  }
  session.reply(id, 'subscribe', resultJson);
  session.noteSubscribed(channel);
  activateSubscription(session, sub);
}

/**
 * Whether a subscription gets fossil deltas: asked for and allowed by the namespace's `allowed_delta_types`. A delta
 * type the protocol does not know is a bad request (close 3501); one the namespace does not allow is just not
 * granted (the result has no `delta`), as Centrifugo does.
 */
function negotiateDelta(requested: unknown, options: ResolvedChannelOptions): boolean {
  if (requested === undefined || requested === null || requested === '') return false;
  if (requested !== 'fossil') throw new DisconnectError(DisconnectCode.badRequest);
  return options.fossilDelta;
}

/** Creates a subscription object (not yet registered); throws 110 when its token already expired. */
export function createSubscription(
  session: ClientSession,
  channel: string,
  options: ResolvedChannelOptions,
  grant: SubscriptionGrant,
  serverSide: boolean,
): Subscription {
  const flags = grant.flags;
  // Positioning without a stream would compare against nothing; such namespaces cannot offer it.
  if (options.history === undefined) {
    flags.positioned = false;
    flags.recoverable = false;
  }
  if (grant.expireAt > 0 && grant.expireAt * 1000 <= Date.now()) throw new ClientError(ErrorCode.expired);
  const sub = new Subscription(session, channel, options, flags, serverSide);
  sub.chanInfo = grant.chanInfo;
  sub.expireAt = grant.expireAt * 1000;
  return sub;
}

/** Re-reads the state after an await (the connection may have closed meanwhile). */
function isRemoved(sub: Subscription): boolean {
  return sub.state === SubscriptionState.Removed;
}

function isStreamRecovered(publications: Publication[], sinceOffset: number, top: number): boolean {
  if (publications.length === 0) return top === sinceOffset;
  return publications[0]!.offset === sinceOffset + 1 && publications[publications.length - 1]!.offset === top;
}

/**
 * Race-free subscribe (docs/protocol.md "Race-free subscribe"): register with the hub and broker first so
 * live publications are buffered, add presence, read the stream (docs/protocol.md "Recovery"), and return the
 * encoded SubscribeResult. The caller writes the reply and then calls `activateSubscription`, which flushes
 * the buffer in order without duplicates.
 */
export async function establishSubscription(
  session: ClientSession,
  sub: Subscription,
  granted: SubscriptionGrant,
  recovery: RecoveryRequest,
): Promise<string> {
  let grant = granted;
  const host = session.host;
  await host.hub.addSubscription(sub);
  if (isRemoved(sub)) throw new DisconnectError(DisconnectCode.connectionClosed);
  if (sub.flags.presence) await host.addPresence(sub);
  const subscribing = sub.serverSide ? undefined : host.hooks.onSubscribing;
  if (subscribing) {
    const decision = await subscribing({
      client: session,
      channel: sub.channel,
      recovering: recovery.recover,
    });
    if (isRemoved(sub)) throw new DisconnectError(DisconnectCode.connectionClosed);
    if (decision?.data !== undefined) grant = { ...grant, data: JSON.stringify(decision.data) };
  }
  const result: Record<string, string | undefined> = {};
  const now = Date.now();
  // With a sub_refresh proxy the server renews the subscription itself: the client is not asked to.
  if (sub.expireAt > 0 && sub.options.proxies.sub_refresh === undefined) {
    result.expires = 'true';
    result.ttl = String(Math.max(1, Math.floor((sub.expireAt - now) / 1000)));
  }
  if (sub.flags.positioned) {
    const history = sub.options.history!;
    let top: StreamPosition;
    let recovered = false;
    let publications: Publication[] = [];
    if (sub.flags.recoverable && recovery.recover) {
      const since = { offset: recovery.offset, epoch: recovery.epoch };
      const read = await host.broker.history({
        channel: sub.channel,
        since,
        limit: host.options.recoveryMaxPublicationLimit,
        history,
      });
      top = read.position;
      const epochOk = since.epoch === '' || since.epoch === top.epoch;
      recovered = epochOk && isStreamRecovered(read.publications, since.offset, top.offset);
      if (!recovered && (recovery.flag & FLAG_REJECT_UNRECOVERED) !== 0) {
        throw new ClientError(ErrorCode.unrecoverablePosition);
      }
      if (recovered) publications = read.publications;
    } else {
      top = (await host.broker.history({ channel: sub.channel, limit: 0, history })).position;
    }
    if (isRemoved(sub)) throw new DisconnectError(DisconnectCode.connectionClosed);
    sub.epoch = top.epoch;
    // Recovered: the client applies the publications from its own offset; otherwise it starts at the top.
    sub.offset = recovered ? (publications.at(-1)?.offset ?? recovery.offset) : top.offset;
    result.recoverable = sub.flags.recoverable ? 'true' : undefined;
    result.positioned = 'true';
    result.epoch = top.epoch ? JSON.stringify(top.epoch) : undefined;
    const offset = recovered ? recovery.offset : top.offset;
    result.offset = offset > 0 ? String(offset) : undefined;
    if (recovered) {
      result.recovered = 'true';
      // With fossil deltas the JSON protocol carries `data` as a string; recovered publications go whole.
      const escaped = sub.delta && session.codec.name === 'json';
      if (publications.length > 0) result.publications = encodePublications(publications, escaped);
      const latest = publications.at(-1)?.data;
      if (sub.delta && latest !== undefined) {
        sub.deltaBase = latest;
        host.hub.seedDeltaBase(sub.channel, latest);
      }
    }
  }
  if (recovery.recover) result.was_recovering = 'true';
  if (sub.delta) result.delta = 'true';
  if (grant.data !== undefined) result.data = grant.data;
  return encodeObject(result);
}

/**
 * After the subscribe reply is queued: deliver what arrived meanwhile, then go live
 * (docs/protocol.md "Race-free subscribe").
 */
export function activateSubscription(session: ClientSession, sub: Subscription): void {
  if (sub.state !== SubscriptionState.Subscribing) return;
  const buffered = sub.buffer;
  const overflow = sub.bufferOverflow;
  sub.buffer = null;
  sub.state = SubscriptionState.Subscribed;
  if (overflow) {
    session.onInsufficientState(sub);
    return;
  }
  if (buffered !== null) {
    for (const { publication, epoch } of buffered) {
      const verdict = advancePosition(sub, publication, epoch);
      if (verdict === PositionVerdict.Duplicate) continue;
      if (verdict === PositionVerdict.Gap) {
        session.onInsufficientState(sub);
        return;
      }
      if (sub.delta) {
        // Whole, and the base of the next delta (delta.ts).
        sub.deltaBase = publication.data;
        session.enqueue(new DeltaPushes(sub.channel, publication, undefined).full());
      } else session.enqueue(encodePublicationPush(sub.channel, publication));
    }
  }
  if (sub.flags.presence) session.notePresence(Date.now());
  if (sub.expireAt > 0) session.reschedule(Date.now());
  if (sub.flags.joinLeave) session.host.publishJoinLeave(sub, true);
  session.host.emitEvent('onSubscribe', session, sub.channel);
}
