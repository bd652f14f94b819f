import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { DigitalEmployee } from '../../digital-employees/digital-employees.service.ts';
import type { Responder } from '../../digital-employees/responders/responder.ts';
import { ResponderError } from '../../digital-employees/responders/responder-errors.ts';
import type { Block, MessageAuthor, MessageRole, MessageSnapshot, SendMessage } from '../messages/message.ts';
import type { MessageStore } from '../messages/message-store.ts';
import { conversationClosed } from '../webchat.errors.ts';
import { announce, type Broadcaster } from './broadcaster.ts';
import type { Conversation } from './conversation.ts';
import type { ConversationsService } from './conversations.service.ts';
import type { LiveSnapshots } from './live-snapshots.ts';
import { ReplyStream } from './reply-stream.ts';
import type { InterruptReason, ReplyTurns } from './reply-turns.ts';

/** Where replies come from: the digital-employees capability (responders behind one interface). */
export interface ReplySource {
  findEmployee(companyId: string, id: string): Promise<DigitalEmployee | undefined>;
  responderFor(employee: DigitalEmployee): Responder;
  greetingFor(employee: DigitalEmployee): string | null;
}

export interface ConversationEngineDeps {
  conversations: ConversationsService;
  store: MessageStore;
  broadcaster: Broadcaster;
  live: LiveSnapshots;
  replies: ReplySource;
  logger: Logger;
  flushIntervalMs: number;
  persistIntervalMs: number;
  responderTimeoutMs: number;
  /** The conversation's line and turn across nodes (a no-op on one node). */
  turns: ReplyTurns;
}

/** Slack on top of the responder timeout before a partial message counts as abandoned by another node. */
export const ABANDONED_REPLY_MARGIN_MS = 30_000;

/** Visitor-facing texts of failures (codes in docs/errors.md "Webchat"). */
const TEXT = {
  failed: 'The digital employee could not answer. Please try again, or ask for a human agent.',
  failedSystem: 'Sorry, the digital employee is unavailable right now. Please try again in a moment.',
  timeout: 'The digital employee took too long to answer.',
  empty: 'The digital employee gave no answer.',
  interrupted: 'This reply was interrupted.',
  restarted: 'This reply was interrupted by a server restart.',
  handover: (name: string | null) =>
    name ? `${name} (a human agent) joined the conversation.` : 'A human agent joined the conversation.',
  handback: 'The conversation is back with the digital employee.',
  closed: 'The conversation was closed.',
};

/**
 * Runs conversations: stores and broadcasts every message (user, digital employee, agent, system) and drives
 * digital-employee replies. One reply streams at a time per conversation; user messages sent meanwhile wait in
 * order. A failed, timed-out or interrupted reply always ends with a `complete` carrying an error block — never a
 * stream left in `partial`.
 */
export class ConversationEngine {
  /** Per conversation: the tail of its reply queue. */
  private readonly queues = new Map<string, Promise<void>>();
  /** Per conversation: the reply streaming now and how to stop it. */
  private readonly active = new Map<string, { controller: AbortController; stream?: ReplyStream }>();
  private closing = false;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly deps: ConversationEngineDeps) {}

  /**
   * Stores a visitor's SendMessage, broadcasts it as one `complete` user envelope and queues the reply. A retry
   * (same client_message_id) returns the stored message with `duplicate: true` and broadcasts nothing.
   */
  async postUserMessage(
    conversation: Conversation,
    send: SendMessage,
  ): Promise<{ snapshot: MessageSnapshot; duplicate: boolean }> {
    const existing = await this.deps.store.findByClientMessageId(conversation.id, send.client_message_id);
    if (existing) return { snapshot: existing, duplicate: true };
    if (conversation.status === 'closed') throw conversationClosed();
    const blocks: Block[] = send.blocks.map((b) => ({
      id: randomUUID(),
      type: 'markdown',
      content: b.content,
    }));
    let stored: { snapshot: MessageSnapshot; position: number };
    try {
      stored = await this.deps.store.insertAt({
        conversationId: conversation.id,
        role: 'user',
        author: null,
        status: 'complete',
        blocks,
        clientMessageId: send.client_message_id,
      });
    } catch (err) {
      // Two copies raced past the lookup; the unique index let one in. The other is the retry.
      const winner = await this.deps.store.findByClientMessageId(conversation.id, send.client_message_id);
      if (winner) return { snapshot: winner, duplicate: true };
      throw err;
    }
    const { snapshot, position } = stored;
    try {
      await announce(this.deps.broadcaster, conversation.companyId, snapshot, 1);
    } finally {
      // Stored means answered, even if the broadcast failed: the client's retry is a duplicate, queues nothing.
      if (conversation.handledBy === 'digital_employee') this.enqueueReply(conversation, snapshot, position);
    }
    return { snapshot, duplicate: false };
  }

  /** Posts the digital employee's greeting (when it has one) as the first message of a new conversation. */
  async postGreeting(conversation: Conversation): Promise<void> {
    const employee = await this.deps.replies.findEmployee(
      conversation.companyId,
      conversation.digitalEmployeeId,
    );
    const greeting = employee && this.deps.replies.greetingFor(employee);
    if (!employee || !greeting) return;
    await this.post(conversation, 'digital_employee', { id: employee.id, name: employee.name }, [
      { id: randomUUID(), type: 'markdown', content: greeting },
    ]);
  }

  /** An agent's message; takes the conversation over first if the digital employee still handles it. */
  async postAgentMessage(
    conversation: Conversation,
    content: Block[],
    author: MessageAuthor,
  ): Promise<MessageSnapshot> {
    if (conversation.status === 'closed') throw conversationClosed();
    if (conversation.handledBy !== 'agent') await this.handover(conversation, author.name);
    return this.post(conversation, 'agent', author, content);
  }

  /** Moves the conversation to an agent: the digital employee stops (even mid-reply) and stays silent. */
  async handover(conversation: Conversation, agentName: string | null): Promise<void> {
    if (conversation.status === 'closed') throw conversationClosed();
    await this.deps.conversations.setHandler(conversation.id, 'agent', agentName);
    conversation.handledBy = 'agent';
    await this.interrupt(conversation.id, 'handover');
    await this.postSystem(conversation, TEXT.handover(agentName));
  }

  /** Gives the conversation back to the digital employee, which answers the next user message. */
  async handback(conversation: Conversation): Promise<void> {
    if (conversation.status === 'closed') throw conversationClosed();
    await this.deps.conversations.setHandler(conversation.id, 'digital_employee', null);
    conversation.handledBy = 'digital_employee';
    await this.postSystem(conversation, TEXT.handback);
  }

  async close(conversation: Conversation): Promise<void> {
    if (conversation.status === 'closed') return;
    await this.deps.conversations.close(conversation.id);
    conversation.status = 'closed';
    await this.interrupt(conversation.id, 'closed');
    await this.postSystem(conversation, TEXT.closed);
  }

  /**
   * Completes messages left `partial` by a crash (nobody streams them any more) with an error block, and tells
   * subscribers. A single node runs it at start-up for every partial message. Where other nodes may be streaming
   * (a cluster), only messages older than the responder timeout are taken: no live reply can be that old, because
   * the timeout ends every reply; `startAbandonedReplySweeper` repeats this.
   */
  async completeAbandonedReplies(options: { onlyOlderThanTimeout?: boolean } = {}): Promise<number> {
    const createdBefore = options.onlyOlderThanTimeout
      ? new Date(Date.now() - this.deps.responderTimeoutMs - ABANDONED_REPLY_MARGIN_MS).toISOString()
      : undefined;
    const stuck = await this.deps.store.listPartial({ createdBefore });
    for (const { snapshot, sequence, companyId } of stuck) {
      const blocks: Block[] = snapshot.blocks.filter((b) => b.type !== 'typing');
      blocks.push({ id: randomUUID(), type: 'error', code: 'reply_interrupted', message: TEXT.restarted });
      const completed: MessageSnapshot = {
        ...snapshot,
        status: 'complete',
        blocks,
        updated_at: new Date().toISOString(),
      };
      await this.deps.store.update(completed, sequence + 1);
      try {
        await announce(this.deps.broadcaster, companyId, completed, sequence + 1);
      } catch (err) {
        this.deps.logger.warn({ err, messageId: snapshot.id }, 'could not announce a recovered message');
      }
    }
    if (stuck.length > 0)
      this.deps.logger.warn({ count: stuck.length }, 'completed replies left partial by an earlier crash');
    return stuck.length;
  }

  /** Periodically completes replies abandoned by a crashed node of the cluster (see completeAbandonedReplies). */
  startAbandonedReplySweeper(intervalMs = 60_000): void {
    this.sweeper = setInterval(() => {
      this.completeAbandonedReplies({ onlyOlderThanTimeout: true }).catch((err) =>
        this.deps.logger.warn({ err }, 'could not complete abandoned replies'),
      );
    }, intervalMs);
    this.sweeper.unref();
  }

  /**
   * Stops the conversation's reply streaming or waiting on this node and, in a cluster, on every other node (the
   * visitor's messages may have been answered by any of them).
   */
  private async interrupt(conversationId: string, reason: InterruptReason): Promise<void> {
    this.stopReply(conversationId, reason);
    await this.deps.turns.interruptElsewhere(conversationId, reason);
  }

  /** Aborts this node's reply in the conversation, if any: it ends with an error block (see endFailedReply). */
  stopReply(conversationId: string, reason: InterruptReason): void {
    this.active.get(conversationId)?.controller.abort(reason);
  }

  /** Stops every reply (each ends with an error block) and waits for the queues to settle. */
  async shutdown(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweeper);
    for (const { controller } of this.active.values()) controller.abort('shutdown');
    await Promise.allSettled([...this.queues.values()]);
  }

  private enqueueReply(conversation: Conversation, message: MessageSnapshot, position: number): void {
    if (this.closing) return;
    const inLine = this.deps.turns.enqueue(conversation.id, message.id, position);
    const previous = this.queues.get(conversation.id) ?? Promise.resolve();
    const next = Promise.all([previous, inLine])
      .then(() => this.reply(conversation.id, message))
      .catch((err) =>
        this.deps.logger.error({ err, conversationId: conversation.id }, 'reply failed unexpectedly'),
      );
    this.queues.set(conversation.id, next);
    void next.finally(() => {
      if (this.queues.get(conversation.id) === next) this.queues.delete(conversation.id);
    });
  }

  private async reply(conversationId: string, message: MessageSnapshot): Promise<void> {
    if (this.closing) {
      await this.deps.turns.release(conversationId, message.id);
      return;
    }
    const controller = new AbortController();
    const slot: { controller: AbortController; stream?: ReplyStream } = { controller };
    this.active.set(conversationId, slot);
    let timeout: NodeJS.Timeout | undefined;
    try {
      // In a cluster, replies of this conversation started on other nodes go first; a handover, close or shutdown
      // meanwhile aborts the wait (and the reply).
      const turn = await this.deps.turns.acquire(conversationId, message.id, controller.signal).then(
        () => true,
        () => false,
      );
      if (!turn) return;
      // Re-read: a handover or close may have happened while this message waited in the queue.
      const conversation = await this.deps.conversations.find(conversationId);
      if (conversation?.status !== 'open' || conversation.handledBy !== 'digital_employee') return;
      const employee = await this.deps.replies.findEmployee(
        conversation.companyId,
        conversation.digitalEmployeeId,
      );
      timeout = setTimeout(() => controller.abort('timeout'), this.deps.responderTimeoutMs);
      await this.replyWith(conversation, employee, message, slot);
    } finally {
      clearTimeout(timeout);
      if (this.active.get(conversationId) === slot) this.active.delete(conversationId);
      await this.deps.turns.release(conversationId, message.id);
    }
  }

  private async replyWith(
    conversation: Conversation,
    employee: DigitalEmployee | undefined,
    message: MessageSnapshot,
    slot: { controller: AbortController; stream?: ReplyStream },
  ): Promise<void> {
    const { controller } = slot;
    if (!employee) {
      await this.postSystem(conversation, TEXT.failedSystem);
      return;
    }
    const stream = new ReplyStream(
      {
        store: this.deps.store,
        broadcaster: this.deps.broadcaster,
        live: this.deps.live,
        logger: this.deps.logger,
        flushIntervalMs: this.deps.flushIntervalMs,
        persistIntervalMs: this.deps.persistIntervalMs,
      },
      conversation.companyId,
      conversation.id,
      { id: employee.id, name: employee.name },
    );
    slot.stream = stream;
    await stream.start();
    try {
      const responder = this.deps.replies.responderFor(employee);
      const history =
        responder.historyLimit > 0
          ? await this.historyBefore(conversation.id, message.id, responder.historyLimit)
          : [];
      const deltas = responder.respond({
        companyId: conversation.companyId,
        conversationId: conversation.id,
        digitalEmployee: employee,
        message,
        history,
        signal: controller.signal,
      });
      for await (const delta of untilAborted(deltas, controller.signal)) stream.append(delta);
      if (controller.signal.aborted) throw controller.signal.reason;
      if (stream.text.length === 0) {
        await stream.complete({ code: 'empty_reply', message: TEXT.empty });
        await this.postSystem(conversation, TEXT.failedSystem);
        return;
      }
      await stream.complete();
    } catch (err) {
      await this.endFailedReply(conversation, stream, controller.signal, err);
    }
  }

  private async endFailedReply(
    conversation: Conversation,
    stream: ReplyStream,
    signal: AbortSignal,
    err: unknown,
  ): Promise<void> {
    const reason = signal.aborted ? signal.reason : undefined;
    if (reason === 'handover' || reason === 'closed' || reason === 'shutdown') {
      await stream.complete({
        code: 'reply_interrupted',
        message: reason === 'shutdown' ? TEXT.restarted : TEXT.interrupted,
      });
      return;
    }
    const responderCode = err instanceof ResponderError ? err.code : undefined;
    const timedOut = reason === 'timeout' || responderCode === 'responder_timeout';
    // Only documented codes reach the visitor: any other failure (a database's, a broker's) is responder_failed.
    const code = timedOut ? 'responder_timeout' : (responderCode ?? 'responder_failed');
    this.deps.logger.warn(
      {
        conversationId: conversation.id,
        messageId: stream.messageId,
        code,
        err: err instanceof Error ? err.message : String(err),
      },
      'digital employee reply failed',
    );
    await stream.complete({ code, message: timedOut ? TEXT.timeout : TEXT.failed });
    await this.postSystem(conversation, TEXT.failedSystem);
  }

  private async historyBefore(
    conversationId: string,
    messageId: string,
    limit: number,
  ): Promise<MessageSnapshot[]> {
    const { messages } = await this.deps.store.page(conversationId, { limit: limit + 2 });
    const index = messages.findIndex((m) => m.id === messageId);
    const before = index >= 0 ? messages.slice(0, index) : messages;
    // The reply being written right now is partial and belongs to no history.
    return before.filter((m) => m.status === 'complete').slice(-limit);
  }

  private postSystem(conversation: Conversation, text: string): Promise<MessageSnapshot> {
    return this.post(conversation, 'system', null, [{ id: randomUUID(), type: 'markdown', content: text }]);
  }

  /** Stores a complete message and broadcasts it as one `complete` envelope (sequence 1). */
  private async post(
    conversation: Conversation,
    role: MessageRole,
    author: MessageAuthor | null,
    blocks: Block[],
  ): Promise<MessageSnapshot> {
    const snapshot = await this.deps.store.insert({
      conversationId: conversation.id,
      role,
      author,
      status: 'complete',
      blocks,
    });
    await announce(this.deps.broadcaster, conversation.companyId, snapshot, 1);
    return snapshot;
  }
}

/**
 * Iterates `source` but stops as soon as `signal` fires, even if the responder is stuck awaiting something that
 * ignores the signal: the reply must end (with its error block) at the timeout, whatever the responder does.
 */
async function* untilAborted<T>(source: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  aborted.catch(() => {});
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), aborted]);
      if (next.done) return;
      yield next.value;
    }
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
    // Let the responder release what it holds (sockets, timers); do not wait for a stuck one.
    void Promise.resolve(iterator.return?.()).catch(() => {});
  }
}
