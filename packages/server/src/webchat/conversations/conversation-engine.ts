import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { DigitalEmployee } from '../../digital-employees/digital-employees.service.ts';
import type { Responder } from '../../digital-employees/responders/responder.ts';
import { ResponderError } from '../../digital-employees/responders/responder-errors.ts';
import { ThrottledWarnings } from '../../logging/throttled-warnings.ts';
import { untilStoreAnswers } from '../../storage/store-retry.ts';
import { DISABLED, type Tracing } from '../../tracing/tracing.ts';
import type { Conversation } from '../conversation.ts';
import { storedUserBlocks } from '../interactive/postbacks.ts';
import type {
  Block,
  MessageAuthor,
  MessageRole,
  MessageSnapshot,
  NoticeBlock,
  SendMessage,
} from '../messages/message.ts';
import type { MessageStore } from '../messages/message-store.ts';
import type { ReadMarks } from '../reads/read-marks.ts';
import { conversationClosed } from '../webchat.errors.ts';
import { type Broadcaster, PendingAnnouncements } from './broadcaster.ts';
import type { ConversationsService } from './conversations.service.ts';
import type { LiveSnapshots } from './live-snapshots.ts';
import { NO_HEARTBEATS, type ReplyHeartbeats } from './reply-heartbeats.ts';
import { LeaseLost, type ReplyJob, type ReplyQueue } from './reply-queue.ts';
import { type JobOutcome, ReplyScheduler } from './reply-scheduler.ts';
import type { InterruptReason, ReplySignals } from './reply-signals.ts';
import { ReplyNotStored, ReplyStream, sequenceAfter, typingMessage } from './reply-stream.ts';
import { markdownText, NO_SHOWN_TEXTS, type ShownTexts } from './shown-texts.ts';

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
  /** The durable line of messages waiting for replies, shared by every node. */
  queue: ReplyQueue;
  /** Hints to the other nodes of a cluster (a no-op on one node). */
  signals: ReplySignals;
  /** Signs of life of the replies running here, outside the store (reply-heartbeats.ts; none on one node). */
  heartbeats?: ReplyHeartbeats;
  /** The longest text clients may have been shown of each streaming reply (shown-texts.ts; none on one node). */
  shownTexts?: ShownTexts;
  /**
   * How long a reply waits for a store that is away (to read the history it answers, to store its completion)
   * before it is left to a takeover; default REPLY_STORE_WAIT_MS.
   */
  storeWaitMs?: number;
  /** A reply job's lease: another node takes the job over this long after its node stopped renewing it. */
  leaseMs: number;
  /** Read marks: a visitor's own message moves their mark, in the transaction that stores it. */
  reads?: Pick<ReadMarks, 'visitorSent'>;
  /**
   * A snapshot as it leaves the server (attachment blocks get their signed `url`): what responders receive, so a
   * webhook bot or a model can fetch the files. Without it snapshots go out as stored.
   */
  present?: (snapshot: MessageSnapshot) => MessageSnapshot;
  /** Told about each reply's timing and failures (metrics; src/metrics/metrics.ts). */
  observer?: ReplyObserver;
  /** A `webchat.reply` span per reply (src/tracing/); the responder's outbound call is its child. */
  tracing?: Tracing;
}

/** Timings of digital employees' replies, in seconds from the moment the responder is asked. */
export interface ReplyObserver {
  firstToken(seconds: number): void;
  /** `outcome` is `completed` or the code of the error block the reply ended with. */
  finished(seconds: number, outcome: string): void;
}

/** How long an interrupt that found no reply is remembered (far longer than a commit takes to be answered). */
const INTERRUPT_MEMORY_MS = 10_000;

/**
 * How long a reply waits for the store by default: far longer than a database restart or failover takes (the
 * contract is 30 s), short enough that a node cut off for good leaves its replies to the others in minutes.
 */
export const REPLY_STORE_WAIT_MS = 120_000;

/** Slack on top of the responder timeout before a partial message without a reply job counts as abandoned. */
export const ABANDONED_REPLY_MARGIN_MS = 30_000;

type Slot = { controller: AbortController; stream?: ReplyStream };

/** A reply job this node claimed, and the reply it started, in the transaction that stored the user message. */
interface ClaimedHere {
  job: ReplyJob;
  conversation: Conversation;
  employee: DigitalEmployee;
  reply: MessageSnapshot;
}

/** Visitor-facing texts of failures (codes in docs/errors.md "Webchat"). */
/** What a system notice is about (its `notice` block, without the block's id and type). */
export type Notice = Omit<NoticeBlock, 'id' | 'type'>;

const UNAVAILABLE: Notice = { notice: 'assistant_unavailable' };

const TEXT = {
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
 * Runs conversations: stores and broadcasts every message (user, digital employee, agent, system) and drives
 * digital-employee replies. A user message joins the durable reply line in the transaction that stores it
 * (reply-queue.ts); the scheduler gives replies one at a time per conversation, in order, on whichever live node
 * claims them. A failed, timed-out or interrupted reply always ends with a `complete` carrying an error block —
 * never a stream left in `partial`, even when its node dies: another node completes it once its lease lapses.
 */
export class ConversationEngine {
  /** Per conversation: the reply streaming on this node now and how to stop it. */
  private readonly active = new Map<string, Slot>();
  private readonly scheduler: ReplyScheduler;
  /** Interrupts that found no reply here (see stopReply), by conversation: when they came. */
  private readonly interruptedWithoutReply = new Map<string, { reason: InterruptReason; at: number }>();
  /** Jobs this node claimed as it stored their message, by message id: what `runJob` would otherwise read back. */
  private readonly claimedHere = new Map<string, ClaimedHere & { message: MessageSnapshot; slot: Slot }>();
  private orphanSweeper: NodeJS.Timeout | undefined;
  /** Completes stored while the broker could not take them, announced again as soon as it can. */
  private readonly announcements: PendingAnnouncements;
  /** Aborts when the drain's grace is over: replies stop waiting for the store (they are left to a takeover). */
  private readonly shuttingDown = new AbortController();
  /** Warnings every reply repeats through an outage, one line per interval for all of them. */
  private readonly warnings: ThrottledWarnings;

  constructor(private readonly deps: ConversationEngineDeps) {
    this.announcements = new PendingAnnouncements(deps.broadcaster, deps.logger);
    this.warnings = new ThrottledWarnings(deps.logger);
    this.scheduler = new ReplyScheduler({
      queue: deps.queue,
      signals: deps.signals,
      heartbeats: deps.heartbeats ?? NO_HEARTBEATS,
      run: (job) => this.runJob(job),
      logger: deps.logger,
      leaseMs: deps.leaseMs,
      sweepMs: Math.max(250, Math.round(deps.leaseMs / 3)),
    });
  }

  private get shownTexts(): ShownTexts {
    return this.deps.shownTexts ?? NO_SHOWN_TEXTS;
  }

  private get storeWaitMs(): number {
    return this.deps.storeWaitMs ?? REPLY_STORE_WAIT_MS;
  }

  /**
   * Starts working the reply line. `alone`: no other node can be alive (one node without Redis), so jobs and
   * partial messages left by the previous process are taken over at once instead of after their lease.
   */
  async start(options: { alone: boolean }): Promise<void> {
    await this.deps.signals.listen((signal) => {
      if (signal.kind === 'interrupt') this.stopReply(signal.conversationId, signal.reason);
      else this.scheduler.kick(signal.conversationId);
    });
    if (options.alone) await this.deps.queue.expireAllLeases();
    this.scheduler.start();
    await this.scheduler.sweep();
    await this.completeOrphanedReplies({ all: options.alone });
    this.orphanSweeper = setInterval(() => {
      this.completeOrphanedReplies({ all: false }).catch((err) =>
        this.deps.logger.warn(
          { err: { message: (err as Error).message } },
          'could not complete orphaned replies',
        ),
      );
    }, 60_000);
    this.orphanSweeper.unref();
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
      conversation.handledBy === 'digital_employee' && !this.scheduler.isDraining
        ? await this.deps.replies.findEmployee(conversation.companyId, conversation.digitalEmployeeId)
        : undefined;
    let snapshot: MessageSnapshot;
    let queued = false;
    let claimed: ClaimedHere | undefined;
    try {
      ({ snapshot } = await this.deps.store.insertAt(
        {
          conversationId: conversation.id,
          role: 'user',
          author,
          status: 'complete',
          blocks,
          clientMessageId: send.client_message_id,
        },
        async (trx, at) => {
          // Decided under the conversation's row lock, in the message's own transaction: a closed conversation
          // takes nothing, and a message the digital employee must answer is never stored without its place in line.
          if (at.conversationStatus === 'closed') throw conversationClosed();
          await this.deps.reads?.visitorSent(trx, conversation.id, at.position);
          if (at.handledBy !== 'digital_employee') return;
          queued = true;
          // When the line is empty, this node takes the job at once and stores the reply's start (its typing
          // message) in the same transaction: one commit, and the reply's envelope 1 can follow the message's.
          const job = await this.deps.queue.enqueue(
            trx,
            { messageId: at.id, conversationId: conversation.id, position: at.position },
            // Checked again here: a drain that began since the lookup leaves the job to the line.
            { claim: employee !== undefined && !this.scheduler.isDraining },
          );
          if (!job || !employee) return;
          const author = { id: employee.id, name: employee.name };
          const { snapshot: reply } = await this.deps.store.insertIn(
            trx,
            typingMessage(conversation.id, author),
          );
          await this.deps.queue.attachReply(trx, job, reply.id);
          const current = {
            ...conversation,
            status: 'open' as const,
            handledBy: 'digital_employee' as const,
          };
          claimed = { job, conversation: current, employee, reply };
        },
      ));
    } catch (err) {
      // A retry (or two copies racing): the unique index on client_message_id let the first one in.
      const winner = await this.deps.store
        .findByClientMessageId(conversation.id, send.client_message_id)
        .catch(() => undefined);
      if (winner) return this.repeat(conversation, winner);
      throw err;
    }
    const job = claimed?.job;
    if (claimed) {
      // The reply is stored: from now on a handover or close must be able to interrupt it (stopReply), and its lease
      // is renewed while the message is announced.
      const slot: Slot = { controller: new AbortController() };
      this.active.set(conversation.id, slot);
      const missed = this.interruptedWithoutReply.get(conversation.id);
      if (missed && missed.at >= storing) slot.controller.abort(missed.reason);
      this.claimedHere.set(claimed.job.messageId, { ...claimed, message: snapshot, slot });
      this.scheduler.hold(claimed.job);
    }
    await this.visitorWrote(conversation);
    try {
      await this.announcements.announce(conversation.companyId, snapshot, 1, { rethrow: true });
    } finally {
      // Stored means answered, even if the broadcast failed: the client's retry is a duplicate, queues nothing.
      if (job) this.scheduler.runClaimed(job);
      else if (queued) this.scheduler.kick(conversation.id);
    }
    return { snapshot, duplicate: false };
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
    await this.post(conversation, 'digital_employee', { id: employee.id, name: employee.name }, [
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
    return this.post(conversation, 'agent', author, content);
  }

  /** Moves the conversation to an agent: the digital employee stops (even mid-reply) and stays silent. */
  async handover(conversation: Conversation, agentName: string | null): Promise<void> {
    if (conversation.status === 'closed') throw conversationClosed();
    await this.deps.conversations.setHandler(conversation.id, 'agent', agentName);
    conversation.handledBy = 'agent';
    await this.interrupt(conversation.id, 'handover');
    await this.postSystem(conversation, TEXT.handover(agentName), {
      notice: 'agent_joined',
      agent_name: agentName,
    });
  }

  /** Gives the conversation back to the digital employee, which answers the next user message. */
  async handback(conversation: Conversation): Promise<void> {
    if (conversation.status === 'closed') throw conversationClosed();
    await this.deps.conversations.setHandler(conversation.id, 'digital_employee', null);
    conversation.handledBy = 'digital_employee';
    await this.postSystem(conversation, TEXT.handback, { notice: 'handed_back' });
  }

  async close(conversation: Conversation): Promise<void> {
    if (conversation.status === 'closed') return;
    await this.deps.conversations.close(conversation.id);
    conversation.status = 'closed';
    await this.interrupt(conversation.id, 'closed');
    await this.postSystem(conversation, TEXT.closed, { notice: 'closed' });
  }

  /**
   * Completes partial messages that no reply job owns (a crash of a node before it could finish its job, or data
   * from before reply jobs existed) with a `reply_interrupted` block. `all`: every one (this node is alone); else
   * only those untouched for longer than any live reply can be silent (the responder timeout and a margin).
   */
  async completeOrphanedReplies(options: { all: boolean }): Promise<number> {
    const quietFor = options.all ? 0 : this.deps.responderTimeoutMs + ABANDONED_REPLY_MARGIN_MS;
    const ids = await this.deps.store.listOrphanedPartial({
      updatedBefore: new Date(Date.now() - quietFor).toISOString(),
    });
    let completed = 0;
    for (const id of ids) if (await this.completeAbandoned(id, TEXT.restarted)) completed += 1;
    if (completed > 0)
      this.deps.logger.warn({ count: completed }, 'completed replies left partial by a crash');
    return completed;
  }

  /** Announces a message as stored complete (retried in the background while the broker cannot take it). */
  private async announceStored(messageId: string): Promise<void> {
    const stored = await this.deps.store.findComplete(messageId);
    const conversation = stored && (await this.deps.conversations.find(stored.snapshot.conversation_id));
    if (!stored || !conversation) return;
    await this.announcements.announce(conversation.companyId, stored.snapshot, stored.sequence);
  }

  /**
   * Completes an abandoned partial message with an error block, above every sequence it may have used, and with the
   * longest text its node recorded as shown (shown-texts.ts) when the store's copy is shorter: a client that read
   * words the dead node never persisted keeps them (DESIGN "Hostile input and faults": the final text begins with
   * every text any client was shown). When that record cannot be read now, this throws and the job is tried again.
   */
  private async completeAbandoned(messageId: string, text: string): Promise<boolean> {
    const shown = await this.shownTexts.longest(messageId);
    const done = await this.deps.store.completeAbandoned(
      messageId,
      (blocks) => [
        ...withShownText(
          blocks.filter((b) => b.type !== 'typing'),
          shown,
        ),
        { id: randomUUID(), type: 'error', code: 'reply_interrupted', message: text },
      ],
      sequenceAfter,
    );
    if (!done) return false;
    this.shownTexts.forget(messageId);
    const conversation = await this.deps.conversations.find(done.snapshot.conversation_id);
    if (conversation) {
      await this.announcements.announce(conversation.companyId, done.snapshot, done.sequence);
    }
    return true;
  }

  /**
   * The broker is back after an outage (the realtime engine's `onBrokerRestored`): the completes it could not take
   * meanwhile are announced now, oldest first, rather than on the next one-second retry.
   */
  announceAgain(): Promise<void> {
    return this.announcements.announceAgain();
  }

  /**
   * Stops the conversation's reply streaming or waiting on this node and, in a cluster, on every other node (the
   * visitor's messages may have been answered by any of them).
   */
  private async interrupt(conversationId: string, reason: InterruptReason): Promise<void> {
    this.stopReply(conversationId, reason);
    await this.deps.signals.send({ kind: 'interrupt', conversationId, reason });
  }

  /**
   * Aborts this node's reply in the conversation, if any: it ends with an error block (see endFailedReply). With
   * none, the interrupt is remembered for a moment: on PostgreSQL another node's handover can commit right after
   * this node stored a message and its reply's start, and its signal can be handled here before this node has
   * registered that reply (postUserMessage checks).
   */
  stopReply(conversationId: string, reason: InterruptReason): void {
    const slot = this.active.get(conversationId);
    if (slot) {
      slot.controller.abort(reason);
      return;
    }
    const now = performance.now();
    if (this.interruptedWithoutReply.size >= 1_000) {
      for (const [id, { at }] of this.interruptedWithoutReply)
        if (now - at > INTERRUPT_MEMORY_MS) this.interruptedWithoutReply.delete(id);
    }
    this.interruptedWithoutReply.set(conversationId, { reason, at: now });
  }

  /**
   * Graceful drain: takes no more reply work, lets the replies streaming here finish for up to `graceMs` (then ends
   * them with an error block), and hands the rest of their lines to the other nodes.
   */
  async shutdown(graceMs = 0): Promise<void> {
    clearInterval(this.orphanSweeper);
    this.announcements.close();
    await this.scheduler.drain(graceMs, () => {
      this.shuttingDown.abort();
      for (const { controller } of this.active.values()) controller.abort('shutdown');
    });
    await this.deps.signals.close();
    this.claimedHere.clear();
  }

  /** Runs one claimed reply job: answers its user message, or finishes the reply a dead node left partial. */
  private async runJob(job: ReplyJob): Promise<JobOutcome> {
    if (job.replyMessageId) {
      // The node that streamed this reply stopped renewing its lease: it is gone. Its message gets its end — or, when
      // that node stored the complete and died before announcing it, the stored complete is announced now (under
      // the same idempotency key, so a copy that did get out is not delivered twice).
      if (!(await this.completeAbandoned(job.replyMessageId, TEXT.abandoned)))
        await this.announceStored(job.replyMessageId);
      return 'done';
    }
    // Read back unless this node claimed the job as it stored the message: any node of a cluster may run a job.
    const known = this.claimedHere.get(job.messageId);
    if (known) {
      this.claimedHere.delete(job.messageId);
      // A handover or close since then has aborted its slot: the reply then ends at once, interrupted.
      return this.runReply(known.conversation, known.employee, known.message, job, known);
    }
    const message = await this.deps.store.find(job.messageId);
    const conversation = await this.deps.conversations.find(job.conversationId);
    // Handed over or closed while the message waited: the digital employee stays silent.
    if (!message || conversation?.status !== 'open' || conversation.handledBy !== 'digital_employee')
      return 'done';
    const employee = await this.deps.replies.findEmployee(
      conversation.companyId,
      conversation.digitalEmployeeId,
    );
    return this.runReply(conversation, employee, message, job);
  }

  /**
   * Streams the reply to `message` under the responder timeout; `claimed` when its start was stored with the message
   * (its slot is registered since then).
   */
  private async runReply(
    conversation: Conversation,
    employee: DigitalEmployee | undefined,
    message: MessageSnapshot,
    job: ReplyJob,
    claimed?: { slot: Slot; reply: MessageSnapshot },
  ): Promise<JobOutcome> {
    const slot: Slot = claimed?.slot ?? { controller: new AbortController() };
    const { controller } = slot;
    this.active.set(conversation.id, slot);
    const timeout = setTimeout(() => controller.abort('timeout'), this.deps.responderTimeoutMs);
    try {
      const tracing = this.deps.tracing ?? DISABLED;
      const attributes = { 'parley.conversation.id': conversation.id, 'parley.message.id': message.id };
      return await tracing.inSpan('webchat.reply', { attributes }, () =>
        this.replyWith(conversation, employee, message, slot, job, claimed?.reply),
      );
    } finally {
      clearTimeout(timeout);
      if (this.active.get(conversation.id) === slot) this.active.delete(conversation.id);
    }
  }

  private async replyWith(
    conversation: Conversation,
    employee: DigitalEmployee | undefined,
    message: MessageSnapshot,
    slot: Slot,
    job: ReplyJob,
    stored?: MessageSnapshot,
  ): Promise<JobOutcome> {
    const { controller } = slot;
    if (!employee) {
      await this.postSystem(conversation, TEXT.failedSystem, UNAVAILABLE);
      return 'done';
    }
    const stream = new ReplyStream(
      {
        store: this.deps.store,
        broadcaster: this.deps.broadcaster,
        announcements: this.announcements,
        live: this.deps.live,
        shown: this.shownTexts,
        logger: this.deps.logger,
        warnings: this.warnings,
        flushIntervalMs: this.deps.flushIntervalMs,
        persistIntervalMs: this.deps.persistIntervalMs,
        storeWaitMs: this.storeWaitMs,
        shutdown: this.shuttingDown.signal,
      },
      conversation.companyId,
      conversation.id,
      { id: employee.id, name: employee.name },
      () => controller.abort('superseded'),
    );
    slot.stream = stream;
    let started = performance.now();
    let outcome: string | undefined;
    try {
      if (stored) await stream.begin(stored);
      else await stream.start((trx, inserted) => this.deps.queue.attachReply(trx, job, inserted.id));
    } catch (err) {
      if (err instanceof LeaseLost) return 'done';
      throw err;
    }
    try {
      const responder = this.deps.replies.responderFor(employee);
      // Read while the typing indicator shows; a store restarting now makes it wait rather than fail the reply.
      const history =
        responder.historyLimit > 0
          ? await untilStoreAnswers(
              () => this.historyBefore(conversation.id, message.id, responder.historyLimit),
              {
                waitMs: this.storeWaitMs,
                signal: AbortSignal.any([controller.signal, this.shuttingDown.signal]),
              },
            )
          : [];
      let humanRequested = false;
      const present = this.deps.present ?? ((s: MessageSnapshot) => s);
      started = performance.now();
      const deltas = responder.respond({
        companyId: conversation.companyId,
        conversationId: conversation.id,
        digitalEmployee: employee,
        message: present(message),
        history: history.map(present),
        signal: controller.signal,
        requestHuman: () => {
          humanRequested = true;
        },
      });
      let first = true;
      for await (const chunk of untilAborted(deltas, controller.signal)) {
        if (first) this.deps.observer?.firstToken(secondsSince(started));
        first = false;
        if (typeof chunk === 'string') stream.append(chunk);
        else if ('status' in chunk) stream.status(chunk.status);
        else stream.offer(chunk.blocks);
      }
      if (controller.signal.aborted) throw controller.signal.reason;
      if (!stream.hasContent) {
        outcome = 'empty_reply';
        await stream.complete({ code: 'empty_reply', message: TEXT.empty });
        await this.postSystem(conversation, TEXT.failedSystem, UNAVAILABLE);
        return 'done';
      }
      await stream.complete();
      outcome = 'completed';
      if (humanRequested) await this.humanRequested(conversation);
    } catch (err) {
      outcome = await this.endFailedReply(conversation, stream, controller.signal, err);
    } finally {
      if (outcome !== undefined) this.deps.observer?.finished(secondsSince(started), outcome);
    }
    return 'done';
  }

  /** Ends a reply that failed; returns the code of its error block (undefined when another node ends it). */
  private async endFailedReply(
    conversation: Conversation,
    stream: ReplyStream,
    signal: AbortSignal,
    err: unknown,
  ): Promise<string | undefined> {
    // The store stayed away too long to take the reply: its job is left to a takeover once the lease lapses.
    if (err instanceof ReplyNotStored) throw err;
    const reason = signal.aborted ? signal.reason : undefined;
    // Another node completed this message (this one lost its lease): nothing more to say.
    if (reason === 'superseded' || stream.superseded) return undefined;
    if (reason === 'handover' || reason === 'closed' || reason === 'shutdown') {
      await stream.complete({
        code: 'reply_interrupted',
        message: reason === 'shutdown' ? TEXT.restarted : TEXT.interrupted,
      });
      return 'reply_interrupted';
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
    await this.postSystem(conversation, TEXT.failedSystem, UNAVAILABLE);
    return code;
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

  /**
   * What happens when a digital employee asks for a person (routing's `requestHuman`, set once by the webchat's
   * composition in webchat.ts: routing acts through the conversation commands, which themselves use this engine).
   */
  onHumanRequested: ((conversation: Conversation) => Promise<unknown>) | undefined;

  /**
   * What happens when the visitor writes (set once by the composition, context.ts: the agent workspace reopens a
   * pending or snoozed conversation, src/workspace/). Called after the message is stored; a failure is logged.
   */
  onVisitorMessage: ((conversation: Conversation) => Promise<unknown>) | undefined;

  private async visitorWrote(conversation: Conversation): Promise<void> {
    if (conversation.workspaceStatus === 'open' || !this.onVisitorMessage) return;
    try {
      await this.onVisitorMessage(conversation);
    } catch (err) {
      this.deps.logger.warn(
        { conversationId: conversation.id, err: err instanceof Error ? err.message : String(err) },
        'could not reopen the conversation the visitor wrote in',
      );
    }
  }

  private async humanRequested(conversation: Conversation): Promise<void> {
    try {
      await this.onHumanRequested?.(conversation);
    } catch (err) {
      // The reply is stored and shown; a failed queueing is logged, and the visitor can still ask themselves.
      this.deps.logger.warn(
        { conversationId: conversation.id, err: err instanceof Error ? err.message : String(err) },
        'could not queue the conversation the digital employee handed over',
      );
    }
  }

  /** A system notice in the conversation (routing: "you are in the queue", "Kim joined"). */
  notify(conversation: Conversation, text: string, notice: Notice): Promise<MessageSnapshot> {
    return this.postSystem(conversation, text, notice);
  }

  /** The notice's English text, then its `notice` block saying what it means (clients may show their own words). */
  private postSystem(conversation: Conversation, text: string, notice: Notice): Promise<MessageSnapshot> {
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
    await this.announcements.announce(conversation.companyId, snapshot, 1);
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

const secondsSince = (started: number): number => (performance.now() - started) / 1000;

/**
 * The blocks of an abandoned reply with its markdown made `shown` when that is longer than what was stored (the
 * stored text is an earlier partial of the same stream, so `shown` begins with it). The markdown stays one block,
 * in its place; a reply stored before its first words gets one at the start.
 */
export function withShownText(blocks: Block[], shown: string | undefined): Block[] {
  if (shown === undefined || shown.length <= markdownText(blocks).length) return blocks;
  const index = blocks.findIndex((b) => b.type === 'markdown');
  if (index < 0) return [{ id: randomUUID(), type: 'markdown', content: shown }, ...blocks];
  return blocks
    .map((b, i) => (i === index ? { ...b, content: shown } : b))
    .filter((b, i) => i <= index || b.type !== 'markdown');
}
