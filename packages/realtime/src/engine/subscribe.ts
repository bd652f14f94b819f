import type { Publication, StreamPosition } from '../broker/types.ts';
import type { ResolvedChannelOptions } from '../config/namespaces.ts';
import {
  type Command,
  encodeObject,
  encodePublicationPush,
  encodePublications,
  toStreamPosition,
} from '../protocol/codec.ts';
import { DisconnectCode, ErrorCode } from '../protocol/codes.ts';
import { ClientError, DisconnectError } from '../protocol/errors.ts';
import { TokenError } from '../tokens/jwt.ts';
import type { SubscriptionOverride } from '../tokens/verifier.ts';
import { advancePosition, PositionVerdict } from './hub.ts';
import { canReadHistory, canReadPresence, resolveChannel } from './permissions.ts';
import type { ClientSession } from './session.ts';
import { Subscription, type SubscriptionFlags, SubscriptionState } from './subscription.ts';

/** Subscribe flag bit 2: reject with 112 instead of answering `recovered: false` (brief §5.3 point 8). */
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

/** Decides whether and how a client may subscribe (CFGO `OnSubscribe`), or throws the reply error / disconnect. */
function authorizeSubscribe(
  session: ClientSession,
  channel: string,
  options: ResolvedChannelOptions,
  request: NonNullable<Command['subscribe']>,
): SubscriptionGrant {
  const { registry, verifier } = session.engine;
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
    // A token for another channel, user or client is an attack, not a mistake: close 3500 (brief §4.2).
    if (claims.channel !== channel || claims.user !== session.user) {
      throw new DisconnectError(DisconnectCode.invalidToken);
    }
    if (claims.client !== undefined && claims.client !== session.id) {
      throw new DisconnectError(DisconnectCode.invalidToken);
    }
    grant.flags = baseFlags(options, claims.override);
    grant.expireAt = session.engine.options.insecure ? 0 : claims.expireAt;
    grant.chanInfo = claims.info;
    grant.data = claims.data;
  } else if (isUserLimited && registry.userAllowed(channel, session.user)) {
    // user-limited channel listing this user
  } else if (
    options.subscribeForClient &&
    (session.user !== '' || options.subscribeForAnonymous) &&
    !isUserLimited
  ) {
    // namespace allows it
  } else if (!session.engine.options.insecure) {
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
  const engine = session.engine;
  const channel = request.channel;
  if (typeof channel !== 'string' || channel === '') throw new DisconnectError(DisconnectCode.badRequest);
  if (session.subs.has(channel)) throw new ClientError(ErrorCode.alreadySubscribed);
  if (session.subs.size >= engine.options.channelLimit) throw new ClientError(ErrorCode.limitExceeded);
  const resolved = resolveChannel(session, channel);
  const grant = authorizeSubscribe(session, channel, resolved.options, request);
  const sub = createSubscription(session, channel, resolved.options, grant, false);
  const recovery: RecoveryRequest = {
    recover: request.recover === true,
    ...toStreamPosition(request),
    flag: typeof request.flag === 'number' ? request.flag : 0,
  };
  session.subs.set(channel, sub);
  let resultJson: string;
  try {
    resultJson = await establishSubscription(sub, grant, recovery);
  } catch (error) {
    if (session.subs.get(channel) === sub) session.subs.delete(channel);
    engine.finishSubscription(sub, undefined);
    throw error;
  }
  session.reply(id, 'subscribe', resultJson);
  activateSubscription(sub);
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
 * Race-free subscribe (brief §5.5): register with the hub and broker first so live publications are buffered,
 * add presence, read the stream (recovering per §5.3), and return the encoded SubscribeResult. The caller writes
 * the reply and then calls `activateSubscription`, which flushes the buffer in order without duplicates.
 */
export async function establishSubscription(
  sub: Subscription,
  grant: SubscriptionGrant,
  recovery: RecoveryRequest,
): Promise<string> {
  const session = sub.session;
  const engine = session.engine;
  await engine.hub.addSubscription(sub);
  if (isRemoved(sub)) throw new DisconnectError(DisconnectCode.connectionClosed);
  if (sub.flags.presence) await engine.addPresence(sub);
  const result: Record<string, string | undefined> = {};
  const now = Date.now();
  if (sub.expireAt > 0) {
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
      const read = await engine.broker.history({
        channel: sub.channel,
        since,
        limit: engine.options.recoveryMaxPublicationLimit,
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
      top = (await engine.broker.history({ channel: sub.channel, limit: 0, history })).position;
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
      if (publications.length > 0) result.publications = encodePublications(publications);
    }
  }
  if (recovery.recover) result.was_recovering = 'true';
  if (grant.data !== undefined) result.data = grant.data;
  return encodeObject(result);
}

/** After the subscribe reply is queued: deliver what arrived meanwhile, then go live (brief §5.5 steps 5–6). */
export function activateSubscription(sub: Subscription): void {
  const session = sub.session;
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
      session.enqueue(encodePublicationPush(sub.channel, publication));
    }
  }
  if (sub.flags.presence) session.notePresence(Date.now());
  if (sub.expireAt > 0) session.reschedule(Date.now());
  if (sub.flags.joinLeave) session.engine.publishJoinLeave(sub, true);
  session.engine.emitEvent('onSubscribe', session, sub.channel);
}
