import type { ResolvedChannelOptions } from '../config/namespaces.ts';
import type { ClientSession } from './session.ts';
import { SubscriptionState } from './subscription.ts';

/** Centrifugo's namespace permission rules (CFGO `handler.go` hasAccessToHistory/Presence, OnPublish). */

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
