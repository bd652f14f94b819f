import type { OfferedChoice, PostbackBlock } from '@parley/webchat-protocol';
import type { Subscription } from 'centrifuge';
import { WebchatError } from './errors.ts';
import type { WebchatOptions } from './options.ts';
import { randomId } from './session-storage.ts';
import type { ChatMessage, Transcript } from './transcript.ts';
import type { Attachment } from './uploads.ts';
import { type SendMessage, SUPPORTED_ENVELOPE_VERSION } from './wire.ts';

/** Longest pause between two attempts of one send. */
const MAX_SEND_RETRY_DELAY_MS = 15_000;

interface SendWaiter {
  resolve(message: ChatMessage): void;
  reject(error: WebchatError): void;
  attempts: number;
  /** When the first attempt failed temporarily (ms since the epoch); the retry window starts then. */
  failingSince?: number;
}

/** Where sends go now: the subscribed conversation's channel and its transcript. */
export interface OutboxTarget {
  subscription: Subscription;
  transcript: Transcript;
}

/** What the outbox needs from the webchat around it. */
export interface OutboxDeps {
  options: Pick<WebchatOptions, 'maxSendAttempts' | 'sendRetryDelayMs' | 'sendRetryWindowMs'>;
  /** The conversation to publish to while it is subscribed; `null` otherwise (sends then wait). */
  target(): OutboxTarget | null;
  /** The open conversation's transcript, subscribed or not (a message's status changes there). */
  transcript(): Transcript | null;
  /** A message's send status changed (`message:updated`, then the list). */
  changed(message: ChatMessage): void;
  /** A send was given up (`send:failed`). */
  failed(message: ChatMessage, error: WebchatError): void;
}

/**
 * The visitor's sends: each shows at once as `pending`, is published one at a time and in order while the
 * conversation is subscribed, and its promise settles once the server has it (or the outbox gives up). Every attempt
 * of one message carries the same `client_message_id`, so however often it is retried the server stores it once.
 */
export class Outbox {
  private readonly waiters = new Map<string, SendWaiter>();
  private flushing = false;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;

  constructor(private readonly deps: OutboxDeps) {}

  /**
   * Adds a visitor message to `transcript` as `pending` — `text` then its attachments, or a postback naming an
   * offered `choice` — and returns it with a promise that resolves once the server stored it. Call
   * {@link flush} after telling listeners about the new message.
   */
  add(
    transcript: Transcript,
    text: string,
    attachments: readonly Attachment[],
    choice?: OfferedChoice,
  ): { message: ChatMessage; stored: Promise<ChatMessage> } {
    const clientMessageId = randomId();
    const stored = this.wait(clientMessageId);
    const message = transcript.addPending(clientMessageId, text, attachments, undefined, choice);
    return { message, stored };
  }

  /** Puts a `failed` message back in line (same `client_message_id`, so it can never appear twice). */
  retry(transcript: Transcript, key: string): Promise<ChatMessage> {
    const message = transcript.get(key);
    if (message?.status !== 'failed' || !message.clientMessageId) {
      throw new WebchatError('not_retryable', 'only a failed message can be retried');
    }
    const stored = this.wait(key);
    const updated = transcript.setSendStatus(key, 'pending');
    if (updated) this.deps.changed(updated);
    void this.flush();
    return stored;
  }

  /**
   * Publishes pending sends one at a time, in order, while subscribed. Temporary failures (timeouts, a transport
   * that closed mid-publish, server codes flagged temporary) leave the message pending for the next subscription or
   * a short delay; anything else, or too many attempts, marks it failed.
   */
  async flush(): Promise<void> {
    if (this.flushing || this.closed) return;
    this.flushing = true;
    try {
      for (let target = this.deps.target(); target; target = this.deps.target()) {
        const next = target.transcript.unsent()[0];
        if (!next?.clientMessageId) break;
        if ((await this.publish(target, next)) === 'stop') break;
      }
    } finally {
      this.flushing = false;
    }
  }

  /** The server has the visitor's message (acknowledged or broadcast): its caller's promise resolves. */
  settle(key: string, message: ChatMessage | undefined): void {
    const waiter = this.waiters.get(key);
    if (!waiter || !message || message.status === 'pending' || message.status === 'failed') return;
    this.waiters.delete(key);
    waiter.resolve(message);
  }

  /** Gives up every pending send of the open conversation (it is being left: switched, or the visitor changed). */
  failUnsent(code: string, reason: string): void {
    for (const message of this.deps.transcript()?.unsent() ?? [])
      if (message.clientMessageId) this.fail(message.clientMessageId, code, reason);
  }

  /** Stops retrying; unsent messages stay `pending` in memory and their promises reject. */
  close(): void {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const [key, waiter] of this.waiters) {
      waiter.reject(new WebchatError('closed', 'the webchat was closed before the message was sent'));
      this.waiters.delete(key);
    }
  }

  private wait(key: string): Promise<ChatMessage> {
    return new Promise<ChatMessage>((resolve, reject) => {
      this.waiters.set(key, { resolve, reject, attempts: 0 });
    });
  }

  private async publish(target: OutboxTarget, message: ChatMessage): Promise<'next' | 'stop'> {
    const key = message.clientMessageId!;
    const waiter = this.waiterFor(key);
    waiter.attempts++;
    const payload: SendMessage = {
      version: SUPPORTED_ENVELOPE_VERSION,
      client_message_id: key,
      blocks: sendBlocksOf(message),
    };
    try {
      await target.subscription.publish(payload);
      const transcript = this.deps.transcript();
      const sent = transcript?.setSendStatus(key, 'sent');
      if (sent) this.deps.changed(sent);
      this.settle(key, sent ?? transcript?.get(key));
      return 'next';
    } catch (raw) {
      const error = raw as { code?: number; message?: string; temporary?: boolean };
      waiter.failingSince ??= Date.now();
      const withinWindow =
        Date.now() - waiter.failingSince < (this.deps.options.sendRetryWindowMs ?? 120_000);
      const withinAttempts =
        waiter.attempts < (this.deps.options.maxSendAttempts ?? Number.POSITIVE_INFINITY);
      if (isTemporary(error) && withinWindow && withinAttempts) {
        if (this.deps.target()) this.scheduleRetry(waiter.attempts);
        return 'stop';
      }
      this.fail(key, String(error.code ?? 'unknown'), error.message ?? 'the message could not be sent');
      return 'next';
    }
  }

  /** Retries after the `attempts`-th failure: the first delay doubled per attempt, capped at 15 s. */
  private scheduleRetry(attempts: number): void {
    if (this.retryTimer || this.closed) return;
    const base = this.deps.options.sendRetryDelayMs ?? 1000;
    const delay = Math.min(base * 2 ** Math.max(0, attempts - 1), Math.max(base, MAX_SEND_RETRY_DELAY_MS));
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.flush();
    }, delay);
  }

  private fail(key: string, code: string, reason: string): void {
    const failed = this.deps.transcript()?.setSendStatus(key, 'failed', { code, message: reason });
    const error = new WebchatError('send_failed', `message not sent: ${reason}`);
    if (failed) {
      this.deps.changed(failed);
      this.deps.failed(failed, error);
    }
    const waiter = this.waiters.get(key);
    this.waiters.delete(key);
    waiter?.reject(error);
  }

  private waiterFor(key: string): SendWaiter {
    let waiter = this.waiters.get(key);
    if (!waiter) {
      // A send restored without a caller waiting (none today, but keeps publish total).
      waiter = { resolve: () => {}, reject: () => {}, attempts: 0 };
      this.waiters.set(key, waiter);
    }
    return waiter;
  }
}

/** Codes worth retrying with the same client_message_id: client-side codes (< 100) and temporary server errors. */
function isTemporary(error: { code?: number; temporary?: boolean }): boolean {
  return error.temporary === true || error.code === undefined || error.code < 100;
}

/**
 * What a pending message publishes: its postback (a tapped choice, alone), or its text then its attachments by id
 * (the server fills in the rest).
 */
function sendBlocksOf(message: ChatMessage): SendMessage['blocks'] {
  return message.blocks.flatMap((b): SendMessage['blocks'] => {
    if (b.type === 'postback') {
      const { option_id, label } = b as PostbackBlock;
      return [{ type: 'postback', option_id, label }];
    }
    if (b.type === 'markdown') return message.text ? [{ type: 'markdown', content: message.text }] : [];
    if (b.type === 'attachment') return [{ type: 'attachment', attachment_id: String(b.attachment_id) }];
    return [];
  });
}
