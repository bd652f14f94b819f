import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { DigitalEmployee } from '../../digital-employees/digital-employees.service.ts';
import type { Responder } from '../../digital-employees/responders/responder.ts';
import { ResponderError } from '../../digital-employees/responders/responder-errors.ts';
import { ThrottledWarnings } from '../../logging/throttled-warnings.ts';
import { untilStoreAnswers } from '../../storage/store-retry.ts';
import { DISABLED } from '../../tracing/tracing.ts';
import type { Conversation } from '../conversation.ts';
import type { Block, MessageSnapshot } from '../messages/message.ts';
import type { PendingAnnouncements } from './broadcaster.ts';
import { type ConversationEngineDeps, REPLY_STORE_WAIT_MS } from './engine-deps.ts';
import { type MessagePoster, TEXT, UNAVAILABLE } from './posted-messages.ts';
import { NO_HEARTBEATS } from './reply-heartbeats.ts';
import { LeaseLost, type ReplyJob } from './reply-queue.ts';
import { type JobOutcome, ReplyScheduler } from './reply-scheduler.ts';
import type { InterruptReason } from './reply-signals.ts';
import { ReplyNotStored, ReplyStream, sequenceAfter } from './reply-stream.ts';
import { markdownText, NO_SHOWN_TEXTS, type ShownTexts } from './shown-texts.ts';

/** How long an interrupt that found no reply is remembered (far longer than a commit takes to be answered). */
const INTERRUPT_MEMORY_MS = 10_000;

/** Slack on top of the responder timeout before a partial message without a reply job counts as abandoned. */
export const ABANDONED_REPLY_MARGIN_MS = 30_000;

type Slot = { controller: AbortController; stream?: ReplyStream };

/** A reply job this node claimed, and the reply it started, in the transaction that stored the user message. */
export interface ClaimedHere {
  job: ReplyJob;
  conversation: Conversation;
  employee: DigitalEmployee;
  reply: MessageSnapshot;
}

/**
 * The digital employee's side of the conversation engine: works the durable reply line (reply-queue.ts) through the
 * scheduler, one reply at a time per conversation, on whichever live node claims it, and streams each reply
 * (reply-stream.ts). A failed, timed-out or interrupted reply always ends with a `complete` carrying an error block —
 * never a stream left in `partial`, even when its node dies: another node completes it once its lease lapses.
 */
export class ReplyRunner {
  /** Per conversation: the reply streaming on this node now and how to stop it. */
  private readonly active = new Map<string, Slot>();
  private readonly scheduler: ReplyScheduler;
  /** Interrupts that found no reply here (see stopReply), by conversation: when they came. */
  private readonly interruptedWithoutReply = new Map<string, { reason: InterruptReason; at: number }>();
  /** Jobs this node claimed as it stored their message, by message id: what `runJob` would otherwise read back. */
  private readonly claimedHere = new Map<string, ClaimedHere & { message: MessageSnapshot; slot: Slot }>();
  private orphanSweeper: NodeJS.Timeout | undefined;
  /** Aborts when the drain's grace is over: replies stop waiting for the store (they are left to a takeover). */
  private readonly shuttingDown = new AbortController();
  /** Warnings every reply repeats through an outage, one line per interval for all of them. */
  private readonly warnings: ThrottledWarnings;

  /**
   * What happens when a digital employee asks for a person (routing's `requestHuman`, set once by the webchat's
   * composition in webchat.ts: routing acts through the conversation commands, which themselves use this engine).
   */
  onHumanRequested: ((conversation: Conversation) => Promise<unknown>) | undefined;

  constructor(
    private readonly deps: ConversationEngineDeps,
    private readonly announcements: PendingAnnouncements,
    private readonly poster: MessagePoster,
  ) {
    this.warnings = new ThrottledWarnings(deps.logger);
    // Every reply waiting for the store listens to this signal (packages/server/src/storage/store-retry.ts),
    // hundreds at once in a burst on a busy pool: not a leak, so no MaxListenersExceededWarning past ten.
    setMaxListeners(0, this.shuttingDown.signal);
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

  /** Whether the drain has begun: no more reply work is taken here. */
  get isDraining(): boolean {
    return this.scheduler.isDraining;
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
   * Takes on a reply whose start was stored with its user message (conversation-intake.ts): from now on a handover
   * or close must be able to interrupt it (stopReply), and its lease is renewed while the message is announced.
   * `storingSince`: when the message began to be stored; an interrupt that found no reply since then concerns it.
   */
  adopt(claimed: ClaimedHere, message: MessageSnapshot, storingSince: number): void {
    const slot: Slot = { controller: new AbortController() };
    this.active.set(claimed.conversation.id, slot);
    const missed = this.interruptedWithoutReply.get(claimed.conversation.id);
    if (missed && missed.at >= storingSince) slot.controller.abort(missed.reason);
    this.claimedHere.set(claimed.job.messageId, { ...claimed, message, slot });
    this.scheduler.hold(claimed.job);
  }

  /** Runs a job this node adopted (see `adopt`). */
  runClaimed(job: ReplyJob): void {
    this.scheduler.runClaimed(job);
  }

  /** The conversation's line has work: work it here if no node does. */
  kick(conversationId: string): void {
    this.scheduler.kick(conversationId);
  }

  /**
   * Stops the conversation's reply streaming or waiting on this node and, in a cluster, on every other node (the
   * visitor's messages may have been answered by any of them).
   */
  async interrupt(conversationId: string, reason: InterruptReason): Promise<void> {
    this.stopReply(conversationId, reason);
    await this.deps.signals.send({ kind: 'interrupt', conversationId, reason });
  }

  /**
   * Aborts this node's reply in the conversation, if any: it ends with an error block (see endFailedReply). With
   * none, the interrupt is remembered for a moment: on PostgreSQL another node's handover can commit right after
   * this node stored a message and its reply's start, and its signal can be handled here before this node has
   * registered that reply (`adopt` checks).
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
    if (!employee) {
      await this.poster.system(conversation, TEXT.failedSystem, UNAVAILABLE);
      return 'done';
    }
    const stream = this.streamFor(conversation, employee, slot);
    try {
      if (stored) await stream.begin(stored);
      else await stream.start((trx, inserted) => this.deps.queue.attachReply(trx, job, inserted.id));
    } catch (err) {
      if (err instanceof LeaseLost) return 'done';
      throw err;
    }
    let started = performance.now();
    let outcome: string | undefined;
    try {
      const responder = this.deps.replies.responderFor(employee);
      // Read while the typing indicator shows; a store restarting now makes it wait rather than fail the reply.
      const history = await this.historyFor(responder, conversation.id, message.id, slot.controller.signal);
      started = performance.now();
      outcome = await this.answer({
        conversation,
        employee,
        message,
        history,
        responder,
        stream,
        slot,
        started,
      });
    } catch (err) {
      outcome = await this.endFailedReply(conversation, stream, slot.controller.signal, err);
    } finally {
      if (outcome !== undefined) this.deps.observer?.finished(secondsSince(started), outcome);
    }
    return 'done';
  }

  /** The stream of one reply; superseded (another node completed its message) aborts the reply. */
  private streamFor(conversation: Conversation, employee: DigitalEmployee, slot: Slot): ReplyStream {
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
        ...(this.deps.busy ? { busy: this.deps.busy } : {}),
        persistIntervalMs: this.deps.persistIntervalMs,
        storeWaitMs: this.storeWaitMs,
        shutdown: this.shuttingDown.signal,
      },
      conversation.companyId,
      conversation.id,
      { id: employee.id, name: employee.name },
      () => slot.controller.abort('superseded'),
    );
    slot.stream = stream;
    return stream;
  }

  /** Asks the responder and streams what it says; the reply's outcome (`completed` or an error code). */
  private async answer(reply: {
    conversation: Conversation;
    employee: DigitalEmployee;
    message: MessageSnapshot;
    history: MessageSnapshot[];
    responder: Responder;
    stream: ReplyStream;
    slot: Slot;
    started: number;
  }): Promise<string> {
    const { conversation, stream, slot } = reply;
    const { signal } = slot.controller;
    let humanRequested = false;
    const present = this.deps.present ?? ((s: MessageSnapshot) => s);
    const deltas = reply.responder.respond({
      companyId: conversation.companyId,
      conversationId: conversation.id,
      digitalEmployee: reply.employee,
      message: present(reply.message),
      history: reply.history.map(present),
      signal,
      requestHuman: () => {
        humanRequested = true;
      },
    });
    let first = true;
    for await (const chunk of untilAborted(deltas, signal)) {
      if (first) this.deps.observer?.firstToken(secondsSince(reply.started));
      first = false;
      if (typeof chunk === 'string') stream.append(chunk);
      else if ('status' in chunk) stream.status(chunk.status);
      else stream.offer(chunk.blocks);
    }
    if (signal.aborted) throw signal.reason;
    if (!stream.hasContent) {
      await stream.complete({ code: 'empty_reply', message: TEXT.empty });
      await this.poster.system(conversation, TEXT.failedSystem, UNAVAILABLE);
      return 'empty_reply';
    }
    await stream.complete();
    if (humanRequested) await this.humanRequested(conversation);
    return 'completed';
  }

  /** What the responder reads before `messageId` (none when it reads no history), waiting out a store restart. */
  private historyFor(
    responder: Responder,
    conversationId: string,
    messageId: string,
    signal: AbortSignal,
  ): Promise<MessageSnapshot[]> {
    if (responder.historyLimit <= 0) return Promise.resolve([]);
    return untilStoreAnswers(() => this.historyBefore(conversationId, messageId, responder.historyLimit), {
      waitMs: this.storeWaitMs,
      signal: AbortSignal.any([signal, this.shuttingDown.signal]),
    });
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
    await this.poster.system(conversation, TEXT.failedSystem, UNAVAILABLE);
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
}

/**
 * Iterates `source` but stops as soon as `signal` fires, even if the responder is stuck awaiting something that
 * ignores the signal: the reply must end (with its error block) at the timeout, whatever the responder does.
 */
async function* untilAborted<T>(source: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  // One settlement per chunk, made here: racing each `next()` against one long-lived abort promise would leave a
  // reaction on that promise per chunk until the reply ends (thousands for a long reply).
  let rejectWaiting: ((reason: unknown) => void) | undefined;
  const onAbort = () => rejectWaiting?.(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      if (signal.aborted) throw signal.reason;
      const next = await new Promise<IteratorResult<T>>((resolve, reject) => {
        rejectWaiting = reject;
        iterator.next().then(resolve, reject);
      });
      rejectWaiting = undefined;
      if (next.done) return;
      yield next.value;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
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
