import type { ResolvedChannel, ResolvedChannelOptions } from '../config/namespaces.ts';
import { ErrorCode } from '../protocol/codes.ts';
import { ClientError } from '../protocol/errors.ts';
import type { ClientSession } from './session.ts';
import { SubscriptionState } from './subscription.ts';

/**
 * Centrifugo's namespace rules for client commands: channel lookup and name checks, and the permission checks
 * (CFGO `handler.go` hasAccessToHistory/Presence, OnPublish).
 */

/** Namespace lookup and name validation of client commands (subscribe/publish/history/presence): 102 / 107. */
export function resolveChannel(session: ClientSession, channel: string): ResolvedChannel {
  const registry = session.engine.registry;
  if (channel.length > registry.rules.maxLength) throw new ClientError(ErrorCode.badRequest);
  const resolved = registry.resolve(channel);
  if (resolved === undefined) throw new ClientError(ErrorCode.unknownChannel);
  if (!registry.isValidName(channel, resolved)) throw new ClientError(ErrorCode.badRequest);
  return resolved;
}

export function isSubscribed(session: ClientSession, channel: string): boolean {
  return session.subs.get(channel)?.state === SubscriptionState.Subscribed;
}

function allowed(
  session: ClientSession,
  forClient: boolean,
  forSubscriber: boolean,
  forAnonymous: boolean,
  subscribed: boolean,
): boolean {
  const userOk = session.user !== '' || forAnonymous;
  if (forClient && userOk) return true;
  if (forSubscriber && subscribed && userOk) return true;
  return session.engine.options.insecure;
}

export function canReadHistory(
  session: ClientSession,
  options: ResolvedChannelOptions,
  subscribed: boolean,
): boolean {
  return allowed(
    session,
    options.historyForClient,
    options.historyForSubscriber,
    options.historyForAnonymous,
    subscribed,
  );
}

export function canReadPresence(
  session: ClientSession,
  options: ResolvedChannelOptions,
  subscribed: boolean,
): boolean {
  return allowed(
    session,
    options.presenceForClient,
    options.presenceForSubscriber,
    options.presenceForAnonymous,
    subscribed,
  );
}

export function canPublish(
  session: ClientSession,
  options: ResolvedChannelOptions,
  subscribed: boolean,
): boolean {
  return allowed(
    session,
    options.publishForClient,
    options.publishForSubscriber,
    options.publishForAnonymous,
    subscribed,
  );
}
