import { readEventOf, readMarksOf } from '@parley/webchat-protocol';
import type { SubscribedContext, Subscription } from 'centrifuge';
import type { RealtimeConnection } from './connection.ts';
import { asWebchatError, WebchatError } from './errors.ts';
import type { Emit } from './events.ts';
import type { VisitorIdentity } from './identity.ts';
import type { Outbox } from './outbox.ts';
import type { ReadState } from './read-state.ts';
import type { RestClient } from './rest-client.ts';
import { type ApplyResult, type ChatMessage, Transcript } from './transcript.ts';
import { type Conversation, inFlightEnvelopes, type MessageSnapshot } from './wire.ts';

/** Upper bound of REST pages read to fill one gap (50 messages each by default). */
const MAX_RECONCILE_PAGES = 20;

type Counts = { added: number; updated: number };

/** What the conversation state needs from the webchat around it. */
export interface ConversationDeps {
  connection: Pick<RealtimeConnection, 'subscribe' | 'unsubscribe' | 'setState' | 'state' | 'subscribed'>;
  rest: Pick<RestClient, 'subscribeToken' | 'listMessages' | 'getConversation'>;
  reads: Pick<ReadState, 'reset' | 'advance' | 'recount'>;
  outbox: Pick<Outbox, 'settle' | 'flush' | 'failUnsent'>;
  identity: Pick<VisitorIdentity, 'remember'>;
  emit: Emit;
  pageSize: number;
}

/**
 * The open conversation (steps 4–5 of the setup order and everything after): its subscription, its
 * {@link Transcript} kept in step with the server — live envelopes, the latest page over REST when subscribing,
 * REST reconciliation after a gap the engine could not recover, older pages on demand — and the listeners told of
 * each change.
 */
export class ConversationState {
  private current: Conversation | null = null;
  private transcript: Transcript | null = null;
  private subscription: Subscription | null = null;
  private hasOlder = true;
  private typingKeys = '';

  constructor(private readonly deps: ConversationDeps) {}

  get conversation(): Conversation | null {
    return this.current;
  }

  /** The open conversation's transcript, once one is open. */
  get messages(): Transcript | null {
    return this.transcript;
  }

  get canLoadOlder(): boolean {
    return this.hasOlder;
  }

  /** Where the outbox publishes: the open conversation while it is subscribed, else nothing. */
  sendTarget(): { subscription: Subscription; transcript: Transcript } | null {
    const { subscription, transcript } = this;
    return this.deps.connection.subscribed && subscription && transcript
      ? { subscription, transcript }
      : null;
  }

  /** The subscription of the open conversation while it is subscribed (typing indicators go there). */
  liveSubscription(): Subscription | null {
    return this.deps.connection.subscribed ? this.subscription : null;
  }

  /** Subscribes to `conversation`; resolves after the first subscription and history load. */
  open(conversation: Conversation): Promise<void> {
    this.current = conversation;
    const transcript = new Transcript(conversation.id);
    this.transcript = transcript;
    this.deps.reads.reset();
    this.hasOlder = true;
    this.deps.identity.remember(conversation);
    this.deps.emit('conversation', conversation);
    this.listChanged();
    const subscription = this.deps.connection.subscribe(conversation.channel, () =>
      this.deps.rest.subscribeToken(conversation.id),
    );
    this.subscription = subscription;
    return new Promise<void>((resolve, reject) => {
      this.follow(subscription, transcript, { resolve, reject });
      subscription.subscribe();
    });
  }

  /** Leaves the open conversation (its unsent messages fail) for `conversation`. */
  async switchTo(conversation: Conversation): Promise<void> {
    const previous = this.subscription;
    this.deps.connection.subscribed = false;
    this.deps.outbox.failUnsent(
      'conversation_changed',
      'the conversation was switched before the message was sent',
    );
    if (previous) this.deps.connection.unsubscribe(previous);
    await this.open(conversation);
  }

  /** Forgets everything (the visitor changed; the connection is dropped by the caller). */
  reset(): void {
    this.subscription = null;
    this.transcript = null;
    this.current = null;
  }

  /** Loads the page before the oldest message shown; resolves with how many messages were new. */
  async loadOlder(transcript: Transcript): Promise<number> {
    const oldest = transcript.oldestStored();
    if (!oldest?.id) return 0;
    const limit = this.deps.pageSize;
    const page = await this.deps.rest.listMessages(transcript.conversationId, { limit, before: oldest.id });
    this.hasOlder = hasMore(page, limit);
    return this.applySnapshots(transcript, page.messages).added;
  }

  /** Takes a fresher view of the open conversation; `conversation:updated` fires when `always` or it changed. */
  update(conversationId: string, fresh: Partial<Conversation>, always = true): void {
    const current = this.current;
    if (current?.id !== conversationId) return;
    const changed =
      always ||
      fresh.status !== current.status ||
      JSON.stringify(fresh.csat) !== JSON.stringify(current.csat);
    this.current = { ...current, ...fresh };
    if (changed) this.deps.emit('conversation:updated', this.current);
  }

  /** A message changed outside the wire (a send's status, a rating): `message:updated`, then the list. */
  changed(message: ChatMessage): void {
    this.deps.emit('message:updated', message);
    this.listChanged();
  }

  /** After any change: the list, the unread count and, when it changed, who is typing. */
  listChanged(): void {
    const messages = this.transcript?.list() ?? [];
    this.deps.emit('messages', messages);
    this.deps.reads.recount(messages);
    const typing = this.transcript?.typing() ?? [];
    const keys = typing.map((m) => m.key).join(',');
    if (keys !== this.typingKeys) {
      this.typingKeys = keys;
      this.deps.emit('typing', { typing: typing.length > 0, messages: typing });
    }
  }

  /** Wires the subscription's events to `transcript`; `first` settles with the first subscription. */
  private follow(
    subscription: Subscription,
    transcript: Transcript,
    first: { resolve(): void; reject(err: unknown): void },
  ): void {
    const { connection, emit } = this.deps;
    let initial = true;
    const isOpen = () => this.transcript === transcript;
    subscription.on('subscribed', (ctx) => {
      if (!isOpen()) return;
      const wasInitial = initial;
      initial = false;
      this.subscribed(transcript, ctx, wasInitial).then(
        () => wasInitial && first.resolve(),
        (err) => (wasInitial ? first.reject(err) : emit('error', asWebchatError(err))),
      );
    });
    subscription.on('subscribing', (ctx) => {
      if (!isOpen()) return;
      connection.subscribed = false;
      if (connection.state === 'connected')
        connection.setState({ state: 'connecting', code: ctx.code, reason: ctx.reason });
    });
    subscription.on('unsubscribed', (ctx) => {
      if (!isOpen()) return;
      connection.subscribed = false;
      if (ctx.code === 0) return;
      connection.setState({ state: 'disconnected', code: ctx.code, reason: ctx.reason });
      if (initial)
        first.reject(new WebchatError('unsubscribed', `subscription ended: ${ctx.reason} (${ctx.code})`));
    });
    subscription.on('publication', (ctx) => {
      if (!isOpen()) return;
      const read = readEventOf(ctx.data);
      if (read) this.deps.reads.advance({ [read.reader]: read.position }, transcript.list(), read.message_id);
      else this.applyEnvelope(transcript, ctx.data);
    });
    subscription.on('error', (ctx) =>
      emit('error', new WebchatError('subscription_error', `${ctx.type}: ${ctx.error.message}`)),
    );
  }

  /**
   * A (re)subscription: the in-flight replies and read marks it carries, then history from REST — the latest page
   * the first time, reconciliation when the engine could not recover the gap (docs/protocol.md "Recovery") — and
   * only then `connected`, and the outbox flushes.
   */
  private async subscribed(transcript: Transcript, ctx: SubscribedContext, initial: boolean): Promise<void> {
    for (const envelope of inFlightEnvelopes(ctx.data)) this.applyEnvelope(transcript, envelope);
    const marks = readMarksOf(ctx.data);
    if (marks) this.deps.reads.advance(marks, transcript.list());
    if (initial) await this.loadLatest(transcript);
    else if (ctx.wasRecovering && !ctx.recovered) {
      const counts = await this.reconcile(transcript);
      if (this.transcript === transcript) this.deps.emit('reconciled', counts);
    }
    if (this.transcript !== transcript) return;
    this.deps.connection.subscribed = true;
    this.deps.connection.setState({ state: 'connected' });
    void this.deps.outbox.flush();
  }

  private async loadLatest(transcript: Transcript): Promise<Counts> {
    const latest = await this.deps.rest.listMessages(transcript.conversationId, {
      limit: this.deps.pageSize,
    });
    if (this.transcript !== transcript) return { added: 0, updated: 0 };
    this.hasOlder = hasMore(latest, this.deps.pageSize);
    return this.applySnapshots(transcript, latest.messages);
  }

  /**
   * Reads pages backwards from the newest until a page overlaps what the transcript already holds, so a long gap is
   * filled completely (bounded to {@link MAX_RECONCILE_PAGES} pages) and nothing appears twice (merge by id).
   */
  private async reconcile(transcript: Transcript): Promise<Counts> {
    const total = { added: 0, updated: 0 };
    let before: string | undefined;
    for (let page = 0; page < MAX_RECONCILE_PAGES; page++) {
      const result = await this.deps.rest.listMessages(transcript.conversationId, {
        limit: this.deps.pageSize,
        before,
      });
      if (this.transcript !== transcript) return total;
      const overlaps = result.messages.some((m) => transcript.getById(m.id) !== undefined);
      const counts = this.applySnapshots(transcript, result.messages);
      total.added += counts.added;
      total.updated += counts.updated;
      if (overlaps || !hasMore(result, this.deps.pageSize) || result.messages.length === 0) break;
      before = result.nextBefore ?? result.messages[0]?.id;
    }
    return total;
  }

  private applyEnvelope(transcript: Transcript, data: unknown): ApplyResult {
    const result = transcript.applyEnvelope(data);
    this.emitResult(result);
    // A message that arrives live already final (an agent's or system message) has completed just now too.
    if (result.outcome === 'added' && result.message?.status === 'complete')
      this.deps.emit('message:completed', result.message);
    // System notices announce handovers and closing: the conversation's state changed.
    if (result.outcome === 'added' && result.message?.role === 'system') void this.refresh();
    return result;
  }

  private applySnapshots(transcript: Transcript, snapshots: readonly MessageSnapshot[]): Counts {
    const counts = { added: 0, updated: 0 };
    for (const snapshot of snapshots) {
      const result = transcript.applySnapshot(snapshot);
      if (result.outcome === 'added') counts.added++;
      if (result.outcome === 'updated' || result.outcome === 'completed') counts.updated++;
      // History is not news: REST loads never fire `message:completed` (no screen-reader announcement of old replies).
      this.emitResult(result.outcome === 'completed' ? { ...result, outcome: 'updated' } : result, false);
    }
    this.listChanged();
    return counts;
  }

  private emitResult(result: ApplyResult, thenList = true): void {
    const message = result.message;
    if (!message) return;
    if (result.outcome === 'added') this.deps.emit('message:added', message);
    if (result.outcome === 'updated') this.deps.emit('message:updated', message);
    if (result.outcome === 'completed') {
      this.deps.emit('message:updated', message);
      this.deps.emit('message:completed', message);
    }
    // The server has the visitor's message: whatever the outbox was doing for it is settled.
    if (message.clientMessageId) this.deps.outbox.settle(message.clientMessageId, message);
    if (thenList) this.listChanged();
  }

  /** Re-reads the open conversation (status, CSAT) and tells listeners when it changed. */
  private async refresh(): Promise<void> {
    const current = this.current;
    if (!current) return;
    const fresh = await this.deps.rest.getConversation(current.id).catch(() => undefined);
    if (fresh) this.update(current.id, fresh, false);
  }
}

/** The server's `next_before` cursor says whether an earlier page exists; without one, a short page is the last. */
function hasMore(
  page: { messages: unknown[]; nextBefore: string | null | undefined },
  limit: number,
): boolean {
  return page.nextBefore === undefined ? page.messages.length >= limit : page.nextBefore !== null;
}
