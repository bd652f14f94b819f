import type { FeedbackRating, OfferedChoice } from '@parley/webchat-protocol';
import { RealtimeConnection } from './connection.ts';
import { ConversationState } from './conversation-state.ts';
import { Emitter } from './emitter.ts';
import { WebchatError, withTimeout } from './errors.ts';
import type { ConnectionState, RealtimeTransport, WebchatEvents } from './events.ts';
import { VisitorIdentity } from './identity.ts';
import type { WebchatOptions } from './options.ts';
import { Outbox } from './outbox.ts';
import { ReadState } from './read-state.ts';
import { type BusinessHoursStatus, RestClient } from './rest-client.ts';
import type { ChatMessage, Transcript } from './transcript.ts';
import { TypingThrottle } from './typing-throttle.ts';
import type { Attachment, UploadOptions } from './uploads.ts';
import { type Conversation, SUPPORTED_ENVELOPE_VERSION, type VisitorTyping } from './wire.ts';

export type { ConnectionChange, ConnectionState, RealtimeTransport, WebchatEvents } from './events.ts';
export type { WebchatOptions } from './options.ts';

/**
 * A webchat session: one conversation at a time over one realtime connection, with tokens renewed, sends
 * retried and history reconciled behind the scenes. Create it with {@link createWebchat}, or construct it and
 * call {@link Webchat.start} yourself when you want to attach listeners first.
 *
 * It is the public face of a few parts with one job each: {@link VisitorIdentity} (session id, visitor token, the
 * conversation to resume), {@link RealtimeConnection} (the centrifuge client and its state),
 * {@link ConversationState} (the open conversation's subscription and {@link Transcript}), {@link Outbox} (sends
 * and their retries) and {@link ReadState} (read marks and the unread count).
 *
 * @example
 * ```ts
 * const chat = new Webchat({ baseUrl: 'https://chat.example.com', companyId });
 * chat.on('messages', (list) => render(list));
 * chat.on('connection', ({ state }) => showState(state));
 * await chat.start();
 * await chat.send('Hello!');
 * ```
 */
export class Webchat extends Emitter<WebchatEvents> {
  readonly rest: RestClient;
  private readonly options: WebchatOptions;
  private readonly identity: VisitorIdentity;
  private readonly connection: RealtimeConnection;
  private readonly reads: ReadState;
  private readonly outbox: Outbox;
  private readonly open: ConversationState;
  private readonly typingThrottle = new TypingThrottle();
  private closed = false;
  private startPromise: Promise<void> | null = null;

  constructor(options: WebchatOptions) {
    super();
    if (!options.baseUrl || !options.companyId)
      throw new WebchatError('invalid_options', 'baseUrl and companyId are required');
    this.options = options;
    const emit = this.emit.bind(this) as Emitter<WebchatEvents>['emit'];
    this.identity = new VisitorIdentity(options);
    this.rest = new RestClient({
      baseUrl: options.baseUrl,
      companyId: options.companyId,
      channelId: options.channelId,
      sessionId: this.identity.sessionId,
      fetch: options.fetch,
      visitorTokens: this.identity.tokens,
      ...(options.attributes ? { attributes: options.attributes } : {}),
      ...(options.tokensWithConversation ? { tokensWithConversation: true } : {}),
    });
    this.connection = new RealtimeConnection(options, this.rest, emit);
    this.reads = new ReadState(this.rest, emit);
    this.outbox = new Outbox({
      options,
      target: () => this.open.sendTarget(),
      transcript: () => this.open.messages,
      changed: (message) => this.open.changed(message),
      failed: (message, error) => emit('send:failed', { message, error }),
    });
    this.open = new ConversationState({
      connection: this.connection,
      rest: this.rest,
      reads: this.reads,
      outbox: this.outbox,
      identity: this.identity,
      emit,
      pageSize: options.pageSize ?? 50,
    });
  }

  /** The visitor's persisted session id (`X-Session-Id`; the `sub` of an anonymous visitor's tokens). */
  get sessionId(): string {
    return this.identity.sessionId;
  }

  /** Whether the visitor is identified (a visitor token, or a `getVisitorToken` callback, is in use). */
  get identified(): boolean {
    return this.identity.identified;
  }

  /** Digital-employee, agent and system messages of the open conversation the visitor has not read yet. */
  get unreadCount(): number {
    return this.reads.unreadCount;
  }

  /**
   * The visitor's read mark: the position up to which they have read the open conversation (their own messages move
   * it). Messages after it that are not the visitor's are the unread ones — e.g. where to draw a "New messages" line.
   */
  get readPosition(): number {
    return this.reads.visitorPosition;
  }

  /** The agents' read mark: the position up to which an agent has read the open conversation (0: nothing yet). */
  get seenPosition(): number {
    return this.reads.agentPosition;
  }

  /** Whether an agent has read this visitor message ("Seen"). */
  isSeen(message: ChatMessage): boolean {
    return this.reads.isSeen(message);
  }

  /** The open conversation, once started. */
  get conversation(): Conversation | null {
    return this.open.conversation;
  }

  /** All messages of the open conversation in display order (user, digital employee, agent and system alike). */
  get messages(): readonly ChatMessage[] {
    return this.open.messages?.list() ?? [];
  }

  get state(): ConnectionState {
    return this.connection.state;
  }

  /**
   * The transport of the current (or last) realtime connection — `websocket`, or the `http_stream` / `sse` fallback
   * when a WebSocket could not be opened; `null` before the first connection.
   */
  get transport(): RealtimeTransport | null {
    return this.connection.transport;
  }

  /** False once `loadOlder` reached the first message of the conversation. */
  get canLoadOlder(): boolean {
    return this.open.canLoadOlder;
  }

  /**
   * Runs the setup order of the spec: (1) create or resume a conversation, (2) get a connection token, (3) connect,
   * (4) get a subscription token, (5) subscribe; then loads the latest messages. Resolves once subscribed.
   * Tokens are fetched through centrifuge `getToken` callbacks, so the 15-minute connection token and the 24-hour
   * subscription token are renewed without the caller doing anything.
   */
  start(): Promise<void> {
    this.startPromise ??= this.runStart();
    return this.startPromise;
  }

  private async runStart(): Promise<void> {
    this.assertOpen();
    const conversation = await this.identity.resumeOrCreate(this.rest);
    const timeoutMs = this.startTimeoutMs();
    // Subscribing only once connected keeps the spec's order: the subscription token is fetched after step 3.
    await this.connection.connect(timeoutMs, () => this.assertOpen());
    await withTimeout(this.open.open(conversation), timeoutMs, 'not subscribed');
  }

  /**
   * Identifies the visitor with a token from your backend (after sign-in, say). Once started, the chat reconnects as
   * the visitor: the conversations this session had in the channel become theirs, and their conversations from
   * other devices appear.
   *
   * @example
   * ```ts
   * await chat.identify(await (await fetch('/me/parley-token')).text());
   * ```
   */
  async identify(token: string): Promise<void> {
    this.assertOpen();
    this.identity.identify(token);
    await this.restart();
  }

  /**
   * Forgets the visitor (after sign-out): a fresh anonymous session starts, which sees none of the visitor's
   * conversations. The token callback is dropped too; pass a token to {@link identify} to identify again.
   */
  async resetIdentity(): Promise<void> {
    this.assertOpen();
    this.rest.setSessionId(this.identity.forget());
    await this.restart();
  }

  /**
   * Sends a visitor message. It appears at once with status `pending`, is published as soon as the conversation
   * is subscribed (retried after reconnects with the same `client_message_id`, which the server deduplicates), and
   * resolves once the server has stored it. Rejects with a `send_failed` {@link WebchatError} when it gives up; the
   * message then has status `failed` and a `send:failed` event fires.
   *
   * With `attachments` (from {@link Webchat.uploadAttachment}) the message carries them after its text; a message
   * may hold only attachments (`text` empty).
   *
   * @example
   * ```ts
   * const message = await chat.send('Where is my order?');
   * message.status; // 'sent' or already 'complete'
   * const photo = await chat.uploadAttachment(file);
   * await chat.send('This arrived broken', { attachments: [photo] });
   * ```
   */
  async send(text: string, options: { attachments?: readonly Attachment[] } = {}): Promise<ChatMessage> {
    const transcript = this.requireTranscript();
    const content = text.trim();
    const attachments = options.attachments ?? [];
    if (content.length === 0 && attachments.length === 0)
      throw new WebchatError('empty_message', 'a message needs text or an attachment');
    return this.enqueue(transcript, content, attachments);
  }

  /**
   * Answers an offered choice — a quick reply option or a card button without `url` — with a postback. Only the
   * choices of {@link openOffer} can be answered (the server refuses others with publish code 400
   * `postback_not_offered`, and the message becomes `failed`). The message appears at once with the choice's
   * label as its text and is sent like {@link send}.
   *
   * @example
   * ```ts
   * const offer = chat.openOffer();
   * const [first] = offer ? choicesOf(offer.blocks) : [];
   * if (first) await chat.sendPostback(first);
   * ```
   */
  async sendPostback(choice: OfferedChoice): Promise<ChatMessage> {
    const transcript = this.requireTranscript();
    if (!choice.id || !choice.label.trim())
      throw new WebchatError('empty_message', 'a choice needs an id and a label');
    return this.enqueue(transcript, choice.label, [], choice);
  }

  /** Sends a `failed` message again (same `client_message_id`, so it can never appear twice). */
  async retry(key: string): Promise<ChatMessage> {
    return this.outbox.retry(this.requireTranscript(), key);
  }

  /** The message whose choices the visitor may answer now, if any (see {@link Transcript.openOffer}). */
  openOffer(): ChatMessage | undefined {
    return this.open.messages?.openOffer();
  }

  /**
   * Tells the agents that the visitor is typing: call it on every input event of a non-empty composer. It publishes
   * `{"version":1,"event":"typing"}` on the conversation channel at most once every 3 s however often it is called
   * (the portal inbox shows "Visitor is typing…" for a few seconds after each). While not connected it does nothing —
   * typing is not queued, since it would be stale by the time it arrives — and it never throws nor rejects: a lost
   * typing publication only shortens the indicator.
   *
   * @example
   * ```ts
   * input.addEventListener('input', () => {
   *   if (input.value.trim()) chat.typing();
   * });
   * ```
   */
  typing(): void {
    const subscription = this.open.liveSubscription();
    if (this.closed || !subscription || !this.typingThrottle.take()) return;
    const payload: VisitorTyping = { version: SUPPORTED_ENVELOPE_VERSION, event: 'typing' };
    subscription.publish(payload).catch(() => undefined);
  }

  /**
   * Uploads a file to the open conversation, reporting real progress (bytes sent) through `onProgress`; send it
   * with `send(text, { attachments: [attachment] })`. The server decides the type from the bytes and enforces the
   * company's size limit: a refusal rejects with an `http_error` {@link WebchatError} whose `problemCode` is
   * `attachment_too_large` (413) or `attachment_type_not_allowed` (415).
   *
   * @example
   * ```ts
   * const photo = await chat.uploadAttachment(input.files[0], {
   *   onProgress: ({ loaded, total }) => (bar.value = loaded / total),
   * });
   * ```
   */
  async uploadAttachment(file: Blob, options: UploadOptions = {}): Promise<Attachment> {
    return this.rest.uploadAttachment(this.requireTranscript().conversationId, file, options);
  }

  /**
   * Marks the open conversation read up to `messageId` (default: its latest message), so `unreadCount` drops and the
   * visitor's other devices start from there. A mark never moves back.
   */
  async markRead(messageId?: string): Promise<void> {
    await this.reads.markRead(this.requireTranscript(), messageId);
  }

  /**
   * Rates a digital-employee or agent message (thumbs up or down, optional comment); rating again replaces it. The
   * message's `feedback` shows the rating once the server stored it.
   *
   * @example
   * ```ts
   * await chat.rateMessage(message.key, 'up');
   * ```
   */
  async rateMessage(key: string, rating: FeedbackRating, comment?: string): Promise<ChatMessage> {
    const transcript = this.requireTranscript();
    const message = transcript.get(key);
    if (!message?.id) throw new WebchatError('not_found', 'no such message in this conversation');
    const stored = await this.rest.rateMessage(transcript.conversationId, message.id, rating, comment);
    const updated = transcript.setFeedback(key, { rating: stored.rating, comment: stored.comment });
    if (updated) this.open.changed(updated);
    return updated ?? message;
  }

  /** Rates the open conversation once it is closed (1–5, optional comment); `conversation:updated` follows. */
  async submitCsat(score: number, comment?: string): Promise<void> {
    const { conversationId } = this.requireTranscript();
    const stored = await this.rest.submitCsat(conversationId, score, comment);
    this.open.update(conversationId, { csat: { score: stored.score, comment: stored.comment } });
  }

  /**
   * Asks for a person in the open conversation (`request_human`): it joins the company's queue, or an available
   * agent is assigned at once; the digital employee keeps answering meanwhile. Idempotent. Answers whether agents
   * are in now and, if not, when they are back (`next_open_at`); `conversation:updated` follows.
   */
  async requestHuman(): Promise<BusinessHoursStatus | null> {
    const { conversationId } = this.requireTranscript();
    const { business_hours, ...fresh } = await this.rest.requestHuman(conversationId);
    this.open.update(conversationId, fresh);
    return business_hours ?? null;
  }

  /** Whether the company's agents are in now and when they are next (null from a server without business hours). */
  async businessHours(): Promise<BusinessHoursStatus | null> {
    return (await this.rest.config()).business_hours ?? null;
  }

  /**
   * The unread count of the conversation this visitor would resume, over REST and without connecting: for a launcher
   * badge before the chat is opened. 0 when there is none to resume.
   */
  async peekUnread(): Promise<number> {
    return this.identity.peekUnread(this.rest);
  }

  /** This session's conversations (only this channel's when `channelId` is set), as the server lists them. */
  listConversations(): Promise<Conversation[]> {
    return this.rest.listConversations();
  }

  /**
   * Loads the page of messages before the oldest one shown. Resolves with how many messages were new;
   * `canLoadOlder` turns false when the start of the conversation is reached.
   */
  async loadOlder(): Promise<number> {
    return this.open.loadOlder(this.requireTranscript());
  }

  /** Switches to an earlier conversation of this session (from `listConversations`). */
  async openConversation(conversationId: string): Promise<void> {
    await this.start();
    if (this.open.conversation?.id === conversationId) return;
    const conversation = (await this.rest.listConversations()).find((c) => c.id === conversationId);
    if (!conversation) throw new WebchatError('not_found', 'no such conversation in this session');
    await withTimeout(this.open.switchTo(conversation), this.startTimeoutMs(), 'not subscribed');
  }

  /** Starts a fresh conversation and switches to it. */
  async startNewConversation(): Promise<Conversation> {
    await this.start();
    const conversation = await this.rest.createConversation();
    await withTimeout(this.open.switchTo(conversation), this.startTimeoutMs(), 'not subscribed');
    return conversation;
  }

  /** Disconnects and stops all timers. Unsent messages stay `pending` in memory; their promises reject. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.outbox.close();
    this.connection.close();
  }

  /** Shows a new visitor message as `pending` and hands it to the outbox; resolves once the server stored it. */
  private enqueue(
    transcript: Transcript,
    text: string,
    attachments: readonly Attachment[],
    choice?: OfferedChoice,
  ): Promise<ChatMessage> {
    const { message, stored } = this.outbox.add(transcript, text, attachments, choice);
    this.emit('message:added', message);
    this.open.listChanged();
    void this.outbox.flush();
    return stored;
  }

  /** Starts over on the same emitter after the visitor changed (listeners stay; nothing of the old chat remains). */
  private async restart(): Promise<void> {
    if (!this.startPromise) return;
    await this.startPromise.catch(() => undefined);
    this.outbox.failUnsent('visitor_changed', 'the visitor changed before the message was sent');
    // Its events must not reach listeners: this is no disconnect of the chat, only of the old identity's link.
    this.connection.drop();
    this.open.reset();
    // Tokens kept from a conversation's creation name the old identity.
    this.rest.forgetRealtimeTokens();
    this.startPromise = null;
    this.connection.setState({ state: 'connecting', reason: 'visitor changed' });
    await this.start();
  }

  private startTimeoutMs(): number {
    return this.options.startTimeoutMs ?? 30_000;
  }

  private requireTranscript(): Transcript {
    this.assertOpen();
    const transcript = this.open.messages;
    if (!transcript) throw new WebchatError('not_started', 'call start() (or use createWebchat) first');
    return transcript;
  }

  private assertOpen(): void {
    if (this.closed) throw new WebchatError('closed', 'this webchat was closed');
  }
}

/**
 * Creates a webchat and runs the spec's setup order; resolves once the conversation is subscribed and its latest
 * messages are loaded. The visitor's session id is generated once and persisted in `storage`, so a reload
 * resumes the same conversation.
 *
 * @example
 * ```ts
 * import { createWebchat } from '@parley/webchat-sdk';
 *
 * const chat = await createWebchat({ baseUrl: 'https://chat.example.com', companyId: 'c0ffee…' });
 * chat.on('message:updated', (m) => console.log(m.role, m.text));
 * await chat.send('Hello!');
 * ```
 */
export async function createWebchat(options: WebchatOptions): Promise<Webchat> {
  const chat = new Webchat(options);
  try {
    await chat.start();
  } catch (err) {
    chat.close();
    throw err;
  }
  return chat;
}
