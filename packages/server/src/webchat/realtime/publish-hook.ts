import { ClientError, type PublishContext, type PublishDecision } from '@parley/realtime';
import { isTypingPublication, VISITOR_TYPING_RELAY_MS } from '@parley/webchat-protocol';
import { AppError } from '../../errors/app-error.ts';
import type { AbuseLimits } from '../abuse-limits.ts';
import { type AttachmentsService, isUnknownAttachment } from '../attachments/attachments.service.ts';
import { type Conversation, parseChannel } from '../conversation.ts';
import type { ConversationEngine } from '../conversations/conversation-engine.ts';
import type { ConversationsService } from '../conversations/conversations.service.ts';
import type { InboxFeed } from '../inbox-feed/inbox-feed.ts';
import {
  PUBLISH_CODES,
  PublishRefusal,
  parseSendMessage,
  parseVisitorTyping,
  type SendMessageLimits,
} from '../messages/send-message.ts';
import { isVisitorKey } from '../visitor.ts';
import { forRealtime } from './realtime-errors.ts';
import type { ConnectionMeta } from './tokens.ts';

export interface PublishHookDeps {
  conversations: ConversationsService;
  engine: ConversationEngine;
  limits: AbuseLimits;
  /** Resolves attachment blocks to this conversation's attachments. */
  attachments: Pick<AttachmentsService, 'blocksOf'>;
  /** Relays a visitor's typing publication to the company's agents. */
  inbox: Pick<InboxFeed, 'visitorTyping'>;
  config: SendMessageLimits & { messagesPerMinutePerSession: number; messagesPerMinutePerIp: number };
}

/** What `onConnecting` keeps on each connection for later hooks. */
export interface ConnectionStorage {
  ip: string;
  companyId: string;
}

/**
 * A visitor's publication on its conversation channel is a SendMessage (docs/design.md): validated → stored durably →
 * deduplicated on client_message_id → broadcast as a `complete` user envelope by the conversation engine → and only
 * then acknowledged. The engine broadcasts it itself (not the raw client data), so the hook answers `skip`.
 * Refusals carry the codes of `PUBLISH_CODES` (400–1999); nothing is broadcast then.
 *
 * A publication with an `event` member is a VisitorTyping instead (docs/asyncapi.yaml): checked like a message
 * (this session's conversation, open), stored nowhere, and relayed to the company's inbox channel at most once per
 * session every `VISITOR_TYPING_RELAY_MS`; the extra ones are acknowledged and dropped.
 */
export function createPublishHook(deps: PublishHookDeps) {
  return async ({ client, channel, data }: PublishContext): Promise<PublishDecision> => {
    try {
      const meta = client.meta as ConnectionMeta | undefined;
      const storage = client.storage as Partial<ConnectionStorage>;
      const target = parseChannel(channel);
      if (!target || !meta || target.companyId !== meta.company_id) throw notFound();
      const typing = isTypingPublication(data);
      const send = typing ? undefined : parseSendMessage(data, deps.config);
      if (typing) parseVisitorTyping(data);
      // The connection's subject is a session, or a verified visitor on any of their devices (realtime/tokens.ts).
      const conversation = await deps.conversations.findForSession(
        {
          companyId: meta.company_id,
          sessionId: client.user,
          ...(isVisitorKey(client.user) ? { visitorKey: client.user } : {}),
        },
        target.conversationId,
      );
      if (!conversation) throw notFound();
      if (!send) {
        await relayTyping(deps, conversation, client.user);
        return { skip: true };
      }
      const retryAfter = await deps.limits.check([
        { key: `msg:s:${client.user}`, limit: deps.config.messagesPerMinutePerSession },
        { key: `msg:ip:${storage.ip ?? 'unknown'}`, limit: deps.config.messagesPerMinutePerIp },
      ]);
      if (retryAfter !== undefined) {
        throw new PublishRefusal(
          PUBLISH_CODES.tooManyMessages,
          `too many messages; retry in ${retryAfter} s`,
        );
      }
      // A verified visitor's messages carry their id and name as their latest token gave them (identity/).
      const author = conversation.visitor
        ? { id: conversation.visitor.id, name: conversation.visitor.name ?? '' }
        : null;
      // Attachments are looked up in the conversation here; markdown and postbacks are made by the engine.
      const blocks = send.blocks.some((b) => b.type === 'attachment')
        ? await deps.attachments.blocksOf(conversation, send.blocks).catch((err: unknown) => {
            if (isUnknownAttachment(err))
              throw new PublishRefusal(
                PUBLISH_CODES.invalidMessage,
                `invalid SendMessage: ${(err as Error).message}`,
              );
            throw err;
          })
        : undefined;
      await deps.engine.postUserMessage(conversation, send, author, blocks);
      return { skip: true };
    } catch (err) {
      if (err instanceof PublishRefusal) throw new ClientError(err.code, err.message);
      if (err instanceof AppError && err.code === 'conversation_closed') {
        throw new ClientError(PUBLISH_CODES.conversationClosed, 'conversation is closed');
      }
      throw forRealtime(err);
    }
  };
}

/** A closed conversation refuses typing like a message (409); within the session's relay window it is dropped. */
async function relayTyping(
  deps: PublishHookDeps,
  conversation: Conversation,
  sessionKey: string,
): Promise<void> {
  if (conversation.status === 'closed')
    throw new PublishRefusal(PUBLISH_CODES.conversationClosed, 'conversation is closed');
  const wait = await deps.limits.check([
    { key: `typing:s:${sessionKey}`, limit: 1, windowMs: VISITOR_TYPING_RELAY_MS },
  ]);
  if (wait === undefined) await deps.inbox.visitorTyping(conversation);
}

const notFound = () =>
  new PublishRefusal(PUBLISH_CODES.conversationNotFound, 'not a conversation of this session');
