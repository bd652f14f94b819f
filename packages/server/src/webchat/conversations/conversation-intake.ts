import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { DigitalEmployee } from '../../digital-employees/digital-employees.service.ts';
import { isStoreUnavailable } from '../../storage/store-errors.ts';
import type { Conversation } from '../conversation.ts';
import { storedUserBlocks } from '../interactive/postbacks.ts';
import type { Block, MessageAuthor, MessageSnapshot, SendMessage } from '../messages/message.ts';
import type { AlsoInTransaction } from '../messages/message-store.ts';
import { conversationClosed } from '../webchat.errors.ts';
import type { PendingAnnouncements } from './broadcaster.ts';
import type { ConversationEngineDeps } from './engine-deps.ts';
import { type MessagePoster, type Notice, TEXT } from './posted-messages.ts';
import type { ClaimedHere, ReplyRunner } from './reply-runner.ts';
import { typingMessage } from './reply-stream.ts';

/** What storing a visitor's message did: whether it joined the reply line, and the job claimed here with it. */
interface Stored {
  snapshot: MessageSnapshot;
  queued: boolean;
  claimed: ClaimedHere | undefined;
}

/**
 * The conversation's side of the engine: takes what visitors, agents and the system write — stores each message
 * and broadcasts it as one `complete` envelope — and moves the conversation between the digital employee and
 * people. A visitor's message joins the durable reply line in the transaction that stores it, and the reply runner
 * (packages/server/src/webchat/conversations/reply-runner.ts) answers it.
 */
export class ConversationIntake {
  /**
   * What happens when the visitor writes (set once by the composition, context.ts: the agent workspace reopens a
   * pending or snoozed conversation, src/workspace/). Called after the message is stored; a failure is logged.
   */
  onVisitorMessage: ((conversation: Conversation) => Promise<unknown>) | undefined;

  constructor(
    private readonly deps: ConversationEngineDeps,
    private readonly runner: ReplyRunner,
    private readonly poster: MessagePoster,
    private readonly announcements: PendingAnnouncements,
  ) {}

  private get logger(): Logger {
    return this.deps.logger;
  }

  /**
   * Stores a visitor's SendMessage, broadcasts it as one `complete` user envelope and queues the reply. A retry
   * (same client_message_id) returns the stored message with `duplicate: true`, queues nothing, and announces it
   * again under the same idempotency key (delivered once, whichever attempt got through). `author` is the verified
   * visitor's `{id: sub, name}` (identity/); an anonymous visitor's messages have none. `resolved` are the stored
   * blocks when the caller resolved them (a message with attachments, attachments.service.ts `blocksOf`); else
   * they are made from `send` here (markdown, or a postback checked against the latest offer).
   */
  async postUserMessage(
    conversation: Conversation,
    send: SendMessage,
    author: MessageAuthor | null = null,
    resolved?: Block[],
  ): Promise<{ snapshot: MessageSnapshot; duplicate: boolean }> {
    // A retry is usually caught by the unique index on the insert (below), which saves a lookup on every message.
    // Two cases look first: on a closed conversation a retry is still answered as a duplicate, and a postback's
    // retry must not be checked against the offers made since its first attempt was stored.
    if (conversation.status === 'closed' || send.blocks.some((b) => b.type === 'postback')) {
      const existing = await this.deps.store.findByClientMessageId(conversation.id, send.client_message_id);
      if (existing) return this.repeat(conversation, existing);
      if (conversation.status === 'closed') throw conversationClosed();
    }
    const blocks = resolved ?? (await storedUserBlocks(this.deps.store, conversation.id, send));
    // When this message began to be stored: an interrupt from then on may concern the reply stored with it.
    const storing = performance.now();
    // Who will answer, known before the transaction so that it can store the reply's start with the message.
    const employee =
      conversation.handledBy === 'digital_employee' && !this.runner.isDraining
        ? await this.deps.replies.findEmployee(conversation.companyId, conversation.digitalEmployeeId)
        : undefined;
    let stored: Stored;
    try {
      stored = await this.store(conversation, send, author, blocks, employee);
    } catch (err) {
      // The store cannot take it now (a full pool, a lost connection): a lookup would only wait for the store once
      // more, while a burst on PostgreSQL needs every pooled connection (docs/operations.md "Capacity"). The client
      // retries the 503, and should the write have been committed after all, the retry finds it by the unique index.
      if (isStoreUnavailable(err)) throw err;
      // A retry (or two copies racing): the unique index on client_message_id let the first one in.
      const winner = await this.deps.store
        .findByClientMessageId(conversation.id, send.client_message_id)
        .catch(() => undefined);
      if (winner) return this.repeat(conversation, winner);
      throw err;
    }
    const { snapshot, claimed } = stored;
    if (claimed) this.runner.adopt(claimed, snapshot, storing);
    await this.visitorWrote(conversation);
    try {
      await this.announcements.announce(conversation.companyId, snapshot, 1, { rethrow: true });
    } finally {
      // Stored means answered, even if the broadcast failed: the client's retry is a duplicate, queues nothing.
      if (claimed) this.runner.runClaimed(claimed.job);
      else if (stored.queued) this.runner.kick(conversation.id);
    }
    return { snapshot, duplicate: false };
  }

  /** Stores the visitor's message with its place in the reply line and, when this node takes the job, the reply's start. */
  private async store(
    conversation: Conversation,
    send: SendMessage,
    author: MessageAuthor | null,
    blocks: Block[],
    employee: DigitalEmployee | undefined,
  ): Promise<Stored> {
    let queued = false;
    let claimed: ClaimedHere | undefined;
    const also: AlsoInTransaction = async (trx, at) => {
      // Decided under the conversation's row lock, in the message's own transaction: a closed conversation
      // takes nothing, and a message the digital employee must answer is never stored without its place in line.
      if (at.conversationStatus === 'closed') throw conversationClosed();
      await this.deps.reads?.visitorSent(trx, conversation.id, at.position);
      if (at.handledBy !== 'digital_employee') return;
      queued = true;
      // When the line is empty, this node takes the job at once and stores the reply's start (its typing
      // message) in the same transaction: one commit, and the reply's envelope 1 can follow the message's. The
      // job is inserted knowing its reply's id, so recording the reply costs no statement of its own.
      const replyId = randomUUID();
      const job = await this.deps.queue.enqueue(
        trx,
        { messageId: at.id, conversationId: conversation.id, position: at.position },
        // Checked again here: a drain that began since the lookup leaves the job to the line.
        employee !== undefined && !this.runner.isDraining ? { replyMessageId: replyId } : undefined,
      );
      if (!job || !employee) return;
      const replyAuthor = { id: employee.id, name: employee.name };
      const { snapshot: reply } = await this.deps.store.insertIn(trx, {
        ...typingMessage(conversation.id, replyAuthor),
        id: replyId,
      });
      const current = { ...conversation, status: 'open' as const, handledBy: 'digital_employee' as const };
      claimed = { job, conversation: current, employee, reply };
    };
    const { snapshot } = await this.deps.store.insertAt(
      {
        conversationId: conversation.id,
        role: 'user',
        author,
        status: 'complete',
        blocks,
        clientMessageId: send.client_message_id,
      },
      also,
    );
    return { snapshot, queued, claimed };
  }

  /**
   * A retried message, already stored: announced again, since the first attempt's broadcast may have failed (that is
   * why the client retries); the idempotency key makes this a no-op where it got through. Queues nothing.
   */
  private async repeat(
    conversation: Conversation,
    existing: MessageSnapshot,
  ): Promise<{ snapshot: MessageSnapshot; duplicate: boolean }> {
    await this.announcements.announce(conversation.companyId, existing, 1, { rethrow: true });
    return { snapshot: existing, duplicate: true };
  }

  /** Posts the digital employee's greeting (when it has one) as the first message of a new conversation; whether it did. */
  async postGreeting(conversation: Conversation): Promise<boolean> {
    const employee = await this.deps.replies.findEmployee(
      conversation.companyId,
      conversation.digitalEmployeeId,
    );
    const greeting = employee && this.deps.replies.greetingFor(employee);
    if (!employee || !greeting) return false;
    await this.poster.post(conversation, 'digital_employee', { id: employee.id, name: employee.name }, [
      { id: randomUUID(), type: 'markdown', content: greeting },
    ]);
    return true;
  }

  /** An agent's message; takes the conversation over first if the digital employee still handles it. */
  async postAgentMessage(
    conversation: Conversation,
    content: Block[],
    author: MessageAuthor,
  ): Promise<MessageSnapshot> {
    if (conversation.status === 'closed') throw conversationClosed();
    if (conversation.handledBy !== 'agent') await this.handover(conversation, author.name);
    return this.poster.post(conversation, 'agent', author, content);
  }

  /** Moves the conversation to an agent: the digital employee stops (even mid-reply) and stays silent. */
  async handover(conversation: Conversation, agentName: string | null): Promise<void> {
    if (conversation.status === 'closed') throw conversationClosed();
    await this.deps.conversations.setHandler(conversation.id, 'agent', agentName);
    conversation.handledBy = 'agent';
    await this.runner.interrupt(conversation.id, 'handover');
    await this.poster.system(conversation, TEXT.handover(agentName), {
      notice: 'agent_joined',
      agent_name: agentName,
    });
  }

  /** Gives the conversation back to the digital employee, which answers the next user message. */
  async handback(conversation: Conversation): Promise<void> {
    if (conversation.status === 'closed') throw conversationClosed();
    await this.deps.conversations.setHandler(conversation.id, 'digital_employee', null);
    conversation.handledBy = 'digital_employee';
    await this.poster.system(conversation, TEXT.handback, { notice: 'handed_back' });
  }

  async close(conversation: Conversation): Promise<void> {
    if (conversation.status === 'closed') return;
    await this.deps.conversations.close(conversation.id);
    conversation.status = 'closed';
    await this.runner.interrupt(conversation.id, 'closed');
    await this.poster.system(conversation, TEXT.closed, { notice: 'closed' });
  }

  /** A system notice in the conversation (routing: "you are in the queue", "Kim joined"). */
  notify(conversation: Conversation, text: string, notice: Notice): Promise<MessageSnapshot> {
    return this.poster.system(conversation, text, notice);
  }

  private async visitorWrote(conversation: Conversation): Promise<void> {
    if (conversation.workspaceStatus === 'open' || !this.onVisitorMessage) return;
    try {
      await this.onVisitorMessage(conversation);
    } catch (err) {
      this.logger.warn(
        { conversationId: conversation.id, err: err instanceof Error ? err.message : String(err) },
        'could not reopen the conversation the visitor wrote in',
      );
    }
  }
}
