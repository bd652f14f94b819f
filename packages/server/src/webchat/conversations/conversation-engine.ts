import type { Conversation } from '../conversation.ts';
import type { Block, MessageAuthor, MessageSnapshot, SendMessage } from '../messages/message.ts';
import { PendingAnnouncements } from './broadcaster.ts';
import { ConversationIntake } from './conversation-intake.ts';
import type { ConversationEngineDeps } from './engine-deps.ts';
import { MessagePoster, type Notice } from './posted-messages.ts';
import { ReplyRunner } from './reply-runner.ts';
import type { InterruptReason } from './reply-signals.ts';

export {
  type ConversationEngineDeps,
  REPLY_STORE_WAIT_MS,
  type ReplyObserver,
  type ReplySource,
} from './engine-deps.ts';
export type { Notice } from './posted-messages.ts';
export { ABANDONED_REPLY_MARGIN_MS, withShownText } from './reply-runner.ts';

/**
 * Runs conversations: stores and broadcasts every message (user, digital employee, agent, system) and drives
 * digital-employee replies. Two halves along one seam: the intake
 * (packages/server/src/webchat/conversations/conversation-intake.ts) takes messages and hand-overs, and a user
 * message joins the durable reply line in the transaction that stores it (reply-queue.ts); the reply runner
 * (packages/server/src/webchat/conversations/reply-runner.ts) gives replies one at a time per conversation, in
 * order, on whichever live node claims them. A failed, timed-out or interrupted reply always ends with a `complete`
 * carrying an error block — never a stream left in `partial`, even when its node dies: another node completes it
 * once its lease lapses. This class is the one face both present to the rest of the webchat.
 */
export class ConversationEngine {
  private readonly intake: ConversationIntake;
  private readonly runner: ReplyRunner;
  /** Completes stored while the broker could not take them, announced again as soon as it can. */
  private readonly announcements: PendingAnnouncements;

  constructor(deps: ConversationEngineDeps) {
    this.announcements = new PendingAnnouncements(deps.broadcaster, deps.logger);
    const poster = new MessagePoster(deps.store, this.announcements);
    this.runner = new ReplyRunner(deps, this.announcements, poster);
    this.intake = new ConversationIntake(deps, this.runner, poster, this.announcements);
  }

  /** See ReplyRunner `start`: `alone` when no other node can be alive. */
  start(options: { alone: boolean }): Promise<void> {
    return this.runner.start(options);
  }

  /** See ConversationIntake `postUserMessage`. */
  postUserMessage(
    conversation: Conversation,
    send: SendMessage,
    author: MessageAuthor | null = null,
    resolved?: Block[],
  ): Promise<{ snapshot: MessageSnapshot; duplicate: boolean }> {
    return this.intake.postUserMessage(conversation, send, author, resolved);
  }

  /** Posts the digital employee's greeting (when it has one) as the first message of a new conversation; whether it did. */
  postGreeting(conversation: Conversation): Promise<boolean> {
    return this.intake.postGreeting(conversation);
  }

  /** An agent's message; takes the conversation over first if the digital employee still handles it. */
  postAgentMessage(
    conversation: Conversation,
    content: Block[],
    author: MessageAuthor,
  ): Promise<MessageSnapshot> {
    return this.intake.postAgentMessage(conversation, content, author);
  }

  /** Moves the conversation to an agent: the digital employee stops (even mid-reply) and stays silent. */
  handover(conversation: Conversation, agentName: string | null): Promise<void> {
    return this.intake.handover(conversation, agentName);
  }

  /** Gives the conversation back to the digital employee, which answers the next user message. */
  handback(conversation: Conversation): Promise<void> {
    return this.intake.handback(conversation);
  }

  close(conversation: Conversation): Promise<void> {
    return this.intake.close(conversation);
  }

  /** A system notice in the conversation (routing: "you are in the queue", "Kim joined"). */
  notify(conversation: Conversation, text: string, notice: Notice): Promise<MessageSnapshot> {
    return this.intake.notify(conversation, text, notice);
  }

  /** See ReplyRunner `completeOrphanedReplies`. */
  completeOrphanedReplies(options: { all: boolean }): Promise<number> {
    return this.runner.completeOrphanedReplies(options);
  }

  /**
   * The broker is back after an outage (the realtime engine's `onBrokerRestored`): the completes it could not take
   * meanwhile are announced now, oldest first, rather than on the next one-second retry.
   */
  announceAgain(): Promise<void> {
    return this.announcements.announceAgain();
  }

  /** See ReplyRunner `stopReply`. */
  stopReply(conversationId: string, reason: InterruptReason): void {
    this.runner.stopReply(conversationId, reason);
  }

  /** See ReplyRunner `shutdown`: the graceful drain of this node's replies. */
  shutdown(graceMs = 0): Promise<void> {
    return this.runner.shutdown(graceMs);
  }

  /** What happens when a digital employee asks for a person (see ReplyRunner `onHumanRequested`). */
  get onHumanRequested(): ((conversation: Conversation) => Promise<unknown>) | undefined {
    return this.runner.onHumanRequested;
  }

  set onHumanRequested(hook: ((conversation: Conversation) => Promise<unknown>) | undefined) {
    this.runner.onHumanRequested = hook;
  }

  /** What happens when the visitor writes (see ConversationIntake `onVisitorMessage`). */
  get onVisitorMessage(): ((conversation: Conversation) => Promise<unknown>) | undefined {
    return this.intake.onVisitorMessage;
  }

  set onVisitorMessage(hook: ((conversation: Conversation) => Promise<unknown>) | undefined) {
    this.intake.onVisitorMessage = hook;
  }
}
