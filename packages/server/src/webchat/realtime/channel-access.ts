import { ClientError, type ClientHandle, ErrorCode, type RealtimeEngine } from '@parley/realtime';
import {
  channelOf,
  INBOX_NAMESPACE_NAME,
  inboxChannelOf,
  MESSAGES_NAMESPACE_NAME,
  parseChannel,
} from '@parley/webchat-protocol';
import type { Logger } from 'pino';
import type { Conversation } from '../conversation.ts';
import type { ConversationsService } from '../conversations/conversations.service.ts';
import { isVisitorKey } from '../visitor.ts';
import type { ConnectionMeta } from './tokens.ts';

/** The realtime subjects of portal users (workspace/inbox.portal.routes.ts): agents of the token's company. */
const PORTAL_SUBJECT_PREFIX = 'portal-user:';

/**
 * Whether `client` may subscribe to `channel` now (docs/design.md "Who may read a conversation channel"). A
 * subscription token proves that the server once granted the channel to the token's `sub`, for 24 hours; who owns a
 * conversation can change meanwhile (an anonymous session that identifies hands its conversations to the visitor),
 * so the owner is read from the store at the moment of subscribing, whatever token the client holds:
 * - a conversation channel: the connection's company's conversation, and its subject is the visitor the
 *   conversation belongs to, the anonymous session that started it while it belongs to no visitor, or an agent;
 * - the inbox channel of a company: an agent of that company.
 * Refused with reply error 103 (permission denied), before any history is read for recovery.
 */
export async function assertMaySubscribe(
  conversations: Pick<ConversationsService, 'find'>,
  client: ClientHandle,
  channel: string,
): Promise<void> {
  const meta = client.meta as ConnectionMeta | undefined;
  const companyId = meta?.company_id;
  if (companyId === undefined) throw permissionDenied();
  if (channel.startsWith(`${INBOX_NAMESPACE_NAME}:`)) {
    if (!isAgent(client.user) || channel !== inboxChannelOf(companyId)) throw permissionDenied();
    return;
  }
  if (!channel.startsWith(`${MESSAGES_NAMESPACE_NAME}:`)) return;
  const target = parseChannel(channel);
  if (!target || target.companyId !== companyId) throw permissionDenied();
  const conversation = await conversations.find(target.conversationId);
  if (!conversation || conversation.companyId !== companyId || !owns(client.user, conversation)) {
    throw permissionDenied();
  }
}

/** The subject's claim on a conversation of its company, as the SDK's REST scope decides it (identity/sdk-session.ts). */
function owns(subject: string, conversation: Conversation): boolean {
  if (isAgent(subject)) return true;
  if (isVisitorKey(subject)) return conversation.visitor?.key === subject;
  return conversation.visitor === null && conversation.sessionId === subject;
}

const isAgent = (subject: string): boolean => subject.startsWith(PORTAL_SUBJECT_PREFIX);

const permissionDenied = () => new ClientError(ErrorCode.permissionDenied, 'permission denied');

/** Delays between attempts to end subscriptions while the broker is away (about a minute in all). */
const RETRY_DELAYS_MS = [250, 1_000, 2_000, 4_000, 8_000, 15_000, 30_000];

/**
 * Ends the live subscriptions of an anonymous session's connections, on every node, to conversations that became a
 * verified visitor's (identity/visitor-directory.ts): each connection gets an unsubscribe push 2000 ("server
 * unsubscribe", terminal for the subscription) and, should it subscribe again, `assertMaySubscribe` refuses it.
 * Resolves after the first attempt; while the broker cannot take the request, it is retried in the background.
 */
export function endSessionSubscriptions(
  realtime: Pick<RealtimeEngine, 'unsubscribe'>,
  logger: Logger,
): (companyId: string, sessionId: string, conversationIds: readonly string[]) => Promise<void> {
  const unsubscribeAll = (companyId: string, sessionId: string, ids: readonly string[]) =>
    Promise.all(ids.map((id) => realtime.unsubscribe(sessionId, channelOf(companyId, id))));
  return async (companyId, sessionId, conversationIds) => {
    if (conversationIds.length === 0) return;
    try {
      await unsubscribeAll(companyId, sessionId, conversationIds);
      return;
    } catch (err) {
      logger.warn(
        { err: { message: (err as Error).message } },
        'ending anonymous subscriptions failed; retrying',
      );
    }
    void (async () => {
      for (const delay of RETRY_DELAYS_MS) {
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
        try {
          await unsubscribeAll(companyId, sessionId, conversationIds);
          return;
        } catch {
          // next attempt
        }
      }
      logger.warn('gave up ending anonymous subscriptions; they end when their connections do');
    })();
  };
}
