import { ErrorCode } from '../protocol/codes.ts';
import { ClientError } from '../protocol/errors.ts';
import type { ResolvedChannel, ResolvedChannelOptions } from './namespaces.ts';
import type { ClientSession } from './session.ts';
import { SubscriptionState } from './subscription.ts';

/**
 * Centrifugo's namespace rules for client commands: channel lookup and name checks, and the permission checks
 * (CFGO `handler.go` hasAccessToHistory/Presence, OnPublish).
 */

/** Namespace lookup and name validation of client commands (subscribe/publish/history/presence): 102 / 107. */
export function resolveChannel(session: ClientSession, channel: string): ResolvedChannel {
  const registry = session.host.registry;
  if (channel.length > registry.rules.maxLength) throw new ClientError(ErrorCode.badRequest);
  const resolved = registry.resolve(channel);
  if (resolved === undefined) throw new ClientError(ErrorCode.unknownChannel);
  if (!registry.isValidName(channel, resolved)) throw new ClientError(ErrorCode.badRequest);
  return resolved;
}

export function isSubscribed(session: ClientSession, channel: string): boolean {
  return session.subs.get(channel)?.state === SubscriptionState.Subscribed;
}

/** The options that allow each action: to any client, to the channel's subscribers, to anonymous users too. */
const ALLOWED_BY = {
  history: {
    client: 'historyForClient',
    subscriber: 'historyForSubscriber',
    anonymous: 'historyForAnonymous',
  },
  presence: {
    client: 'presenceForClient',
    subscriber: 'presenceForSubscriber',
    anonymous: 'presenceForAnonymous',
  },
  publish: {
    client: 'publishForClient',
    subscriber: 'publishForSubscriber',
    anonymous: 'publishForAnonymous',
  },
} as const satisfies Record<string, Record<string, keyof ResolvedChannelOptions>>;
type Action = keyof typeof ALLOWED_BY;

/**
 * Whether `session` may run `action` on a channel with `options` (CFGO `handler.go`): the namespace allows it to
 * every client, or to subscribers and the session is `subscribed`; either way an anonymous session only when the
 * namespace allows anonymous users. `insecure` allows everything.
 */
function allowed(
  session: ClientSession,
  options: ResolvedChannelOptions,
  action: Action,
  subscribed: boolean,
): boolean {
  const by = ALLOWED_BY[action];
  const userOk = session.user !== '' || options[by.anonymous];
  if (options[by.client] && userOk) return true;
  if (options[by.subscriber] && subscribed && userOk) return true;
  return session.host.options.insecure;
}

export const canReadHistory = (
  session: ClientSession,
  options: ResolvedChannelOptions,
  subscribed: boolean,
) => allowed(session, options, 'history', subscribed);

export const canReadPresence = (
  session: ClientSession,
  options: ResolvedChannelOptions,
  subscribed: boolean,
) => allowed(session, options, 'presence', subscribed);

export const canPublish = (session: ClientSession, options: ResolvedChannelOptions, subscribed: boolean) =>
  allowed(session, options, 'publish', subscribed);
