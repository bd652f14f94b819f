import { randomUUID } from 'node:crypto';
import type { Conversation } from '../conversation.ts';
import type { Block, MessageAuthor, MessageRole, MessageSnapshot, NoticeBlock } from '../messages/message.ts';
import type { MessageStore } from '../messages/message-store.ts';
import type { PendingAnnouncements } from './broadcaster.ts';

/** What a system notice is about (its `notice` block, without the block's id and type). */
export type Notice = Omit<NoticeBlock, 'id' | 'type'>;

export const UNAVAILABLE: Notice = { notice: 'assistant_unavailable' };

/** Visitor-facing texts of failures and notices (codes in docs/errors.md "Webchat"). */
export const TEXT = {
  failed: 'The digital employee could not answer. Please try again, or ask for a human agent.',
  failedSystem: 'Sorry, the digital employee is unavailable right now. Please try again in a moment.',
  timeout: 'The digital employee took too long to answer.',
  empty: 'The digital employee gave no answer.',
  interrupted: 'This reply was interrupted.',
  restarted: 'This reply was interrupted by a server restart.',
  abandoned: 'This reply was interrupted. Please send your message again.',
  handover: (name: string | null) =>
    name ? `${name} (a human agent) joined the conversation.` : 'A human agent joined the conversation.',
  handback: 'The conversation is back with the digital employee.',
  closed: 'The conversation was closed.',
};

/**
 * Complete messages the engine writes whole (greetings, agents' messages, system notices), for both halves of the
 * engine: the intake and the reply runner post them alike.
 */
export class MessagePoster {
  constructor(
    private readonly store: MessageStore,
    private readonly announcements: PendingAnnouncements,
  ) {}

  /** The notice's English text, then its `notice` block saying what it means (clients may show their own words). */
  system(conversation: Conversation, text: string, notice: Notice): Promise<MessageSnapshot> {
    return this.post(conversation, 'system', null, [
      { id: randomUUID(), type: 'markdown', content: text },
      { id: randomUUID(), type: 'notice', ...notice },
    ]);
  }

  /**
   * Stores a complete message and broadcasts it as one `complete` envelope (sequence 1). Stored is what counts:
   * a broadcast the broker cannot take now is retried in the background rather than failing the caller, whose
   * retry would store the message twice.
   */
  async post(
    conversation: Conversation,
    role: MessageRole,
    author: MessageAuthor | null,
    blocks: Block[],
  ): Promise<MessageSnapshot> {
    const snapshot = await this.store.insert({
      conversationId: conversation.id,
      role,
      author,
      status: 'complete',
      blocks,
    });
    await this.announcements.announce(conversation.companyId, snapshot, 1);
    return snapshot;
  }
}
