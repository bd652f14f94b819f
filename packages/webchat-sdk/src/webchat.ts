import {
  EMULATION_PATH,
  type FeedbackRating,
  HTTP_STREAM_PATH,
  type OfferedChoice,
  type PostbackBlock,
  type ReadMarks,
  readEventOf,
  readMarksOf,
  SSE_PATH,
  WEBSOCKET_PATH,
} from '@parley/webchat-protocol';
import {
  Centrifuge,
  type Options as CentrifugeOptions,
  type Subscription,
  type TransportEndpoint,
  UnauthorizedError,
} from 'centrifuge';
import { Emitter } from './emitter.ts';
import { WebchatError } from './errors.ts';
import { type ApplyResult, type ChatMessage, MessageStore } from './message-store.ts';
import { type BusinessHoursStatus, type FetchLike, RestClient } from './rest-client.ts';
import { defaultStorage, type KeyValueStorage, randomId, SessionStore } from './session-storage.ts';
import { TypingThrottle } from './typing-throttle.ts';
import type { Attachment, UploadOptions } from './uploads.ts';
import { type GetVisitorToken, VisitorTokens } from './visitor-tokens.ts';
import {
  type Conversation,
  inFlightEnvelopes,
  type SendMessage,
  SUPPORTED_ENVELOPE_VERSION,
  type VisitorTyping,
} from './wire.ts';

/** Options of {@link createWebchat}. Only `baseUrl` and `companyId` are required. */
export interface WebchatOptions {
  /** Where Parley runs, e.g. `https://chat.example.com`. */
  baseUrl: string;
  /** Company id from the company settings of the platform (`X-Company`). */
  companyId: string;
  /** Channel id (`X-Channel-Id`): keeps this widget's conversations apart from other channels'. */
  channelId?: string;
  /**
   * A verified visitor's token (`X-Visitor-Token`), signed by your backend with the channel's identity secret: the
   * visitor then sees their conversations on every device. Needs `channelId`.
   */
  visitorToken?: string;
  /**
   * Returns the visitor's token (or `null` while anonymous). Called before the first REST call, again when the
   * cached token is about to expire (its `exp`), and when the server refuses it (`visitor_token_invalid`).
   */
  getVisitorToken?: GetVisitorToken;
  /** Where the session id and the current conversation persist. Default: localStorage, else memory. */
  storage?: KeyValueStorage;
  /** WebSocket constructor where there is no global one (Node 20: `import WebSocket from 'ws'`). */
  websocket?: unknown;
  /** fetch implementation; default: the global `fetch`. */
  fetch?: FetchLike;
  /** Realtime endpoint; default: discovered from `GET /sdk/v1/config`. */
  realtimeUrl?: string;
  /**
   * Which realtime transports to try, in order, when connecting: a WebSocket first and, where a proxy or firewall
   * blocks it, HTTP-streaming, then server-sent events (Centrifugo's bidirectional emulation). Once one has worked it
   * is kept for the session's reconnects. The one in use is {@link Webchat.transport}. Default: all three, in that
   * order.
   */
  transports?: RealtimeTransport[];
  /**
   * Fallback endpoints; default: discovered from `GET /sdk/v1/config`, else derived from `baseUrl`
   * (`/connection/http_stream`, `/connection/sse`, `/emulation`).
   */
  httpStreamUrl?: string;
  sseUrl?: string;
  emulationUrl?: string;
  /** Open this conversation instead of resuming the last one. */
  conversationId?: string;
  /** Start a new conversation even if one could be resumed. */
  newConversation?: boolean;
  /** Messages per REST page (initial load, `loadOlder`, reconciliation). Default 50. */
  pageSize?: number;
  /**
   * Publish attempts per message before it is marked `failed`, however short the outage. Default: no limit (the
   * retry window decides).
   */
  maxSendAttempts?: number;
  /**
   * First delay before re-publishing after a temporary error (the server's 503 while its database or broker is
   * down, a time-out, a dropped connection), in ms; it doubles with each attempt up to 15 s. Default 1000.
   */
  sendRetryDelayMs?: number;
  /**
   * How long a message keeps being retried after its first temporary failure before it is marked `failed`, in ms.
   * Every attempt carries the same `client_message_id`, so the server stores it once. Default 120000.
   */
  sendRetryWindowMs?: number;
  /** How long `start()` waits for the first subscription before rejecting, in ms. Default 30000. */
  startTimeoutMs?: number;
  /**
   * Tuning passed to the centrifuge client (reconnect delays, timeouts), and the `fetch`, `readableStream` and
   * `eventsource` implementations the fallback transports need where there are no global ones (Node 20 has no
   * `EventSource`, so SSE is skipped there unless one is given).
   */
  centrifuge?: Partial<
    Pick<
      CentrifugeOptions,
      | 'minReconnectDelay'
      | 'maxReconnectDelay'
      | 'timeout'
      | 'maxServerPingDelay'
      | 'debug'
      | 'fetch'
      | 'readableStream'
      | 'eventsource'
    >
  >;
}

/**
 * How the webchat reaches the realtime engine: `websocket`, or a fallback for networks that block WebSocket —
 * `http_stream` (a streamed HTTP response) or `sse` (server-sent events); with both fallbacks the visitor's messages
 * go up as plain HTTP requests.
 */
export type RealtimeTransport = 'websocket' | 'http_stream' | 'sse';

const ALL_TRANSPORTS: readonly RealtimeTransport[] = ['websocket', 'http_stream', 'sse'];

/** The endpoints of every transport, and where the fallbacks post their commands. */
interface RealtimeEndpoints {
  websocket: string;
  http_stream: string;
  sse: string;
  emulation: string;
}

/** `connected` means subscribed to the conversation, i.e. messages flow both ways. */
export type ConnectionState = 'connecting' | 'connected' | 'disconnected';

export interface ConnectionChange {
  state: ConnectionState;
  /** Why: a centrifuge code (e.g. 1 "transport closed", 3500 "invalid token") when there is one. */
  code?: number;
  reason?: string;
}

/** Events of a {@link Webchat}; subscribe with `chat.on(name, listener)`. */
export interface WebchatEvents {
  /** A message appeared (a visitor send, a streamed reply's first snapshot, a message loaded over REST). */
  'message:added': (message: ChatMessage) => void;
  /** A message changed (text grew, a send was acknowledged or failed, a typing indicator turned into text). */
  'message:updated': (message: ChatMessage) => void;
  /** A message reached its final state (`complete`); fires once per message. */
  'message:completed': (message: ChatMessage) => void;
  /** After any change: all messages in display order. Convenient for re-rendering. */
  messages: (messages: readonly ChatMessage[]) => void;
  /** The set of messages showing only a typing indicator changed. */
  typing: (change: { typing: boolean; messages: ChatMessage[] }) => void;
  connection: (change: ConnectionChange) => void;
  /** A connection was established over this transport (the first one, or a different one after a fallback). */
  transport: (transport: RealtimeTransport) => void;
  /** A send was given up; the message has status `failed` and can be retried with `retry(message.key)`. */
  'send:failed': (change: { message: ChatMessage; error: WebchatError }) => void;
  /** The open conversation changed (started, resumed, switched). */
  conversation: (conversation: Conversation) => void;
  /** REST reconciliation ran after a reconnect the realtime engine could not recover. */
  reconciled: (change: { added: number; updated: number }) => void;
  /** A background failure that the SDK keeps retrying (token fetch, history load). */
  error: (error: WebchatError) => void;
  /**
   * The open conversation's status or CSAT changed (e.g. an agent closed it: time to ask for a rating). Not fired
   * for a switch to another conversation (that is `conversation`).
   */
  'conversation:updated': (conversation: Conversation) => void;
  /** The number of digital-employee, agent and system messages after the visitor's read mark changed. */
  unread: (change: { count: number }) => void;
  /**
   * An agent has read the conversation up to `position`: the visitor's messages at or below it have been seen
   * (see {@link Webchat.isSeen}).
   */
  seen: (change: { position: number; messageId: string | null }) => void;
}

/** Upper bound of REST pages read to fill one gap (50 messages each by default). */
const MAX_RECONCILE_PAGES = 20;

interface SendWaiter {
  resolve(message: ChatMessage): void;
  reject(error: WebchatError): void;
  attempts: number;
  /** When the first attempt failed temporarily (ms since the epoch); the retry window starts then. */
  failingSince?: number;
}

/** Longest pause between two attempts of one send. */
const MAX_SEND_RETRY_DELAY_MS = 15_000;

/**
 * A webchat session: one conversation at a time over one realtime connection, with tokens renewed, sends
 * retried and history reconciled behind the scenes. Create it with {@link createWebchat}, or construct it and
 * call {@link Webchat.start} yourself when you want to attach listeners first.
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
  private currentSessionId: string;
  private readonly tokens: VisitorTokens;
  /** Read marks of the open conversation: positions of the last message the visitor and the agents have read. */
  private readMarks: ReadMarks = { visitor: 0, agent: 0 };
  private lastUnread = 0;
  private readonly options: WebchatOptions;
  private readonly session: SessionStore;
  private client: Centrifuge | null = null;
  private subscription: Subscription | null = null;
  private store: MessageStore | null = null;
  private current: Conversation | null = null;
  private connectionState: ConnectionState = 'disconnected';
  private currentTransport: RealtimeTransport | null = null;
  private subscribed = false;
  private flushing = false;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly waiters = new Map<string, SendWaiter>();
  private typingKeys = '';
  private readonly typingThrottle = new TypingThrottle();
  private hasOlder = true;
  private closed = false;
  private startPromise: Promise<void> | null = null;

  constructor(options: WebchatOptions) {
    super();
    if (!options.baseUrl || !options.companyId)
      throw new WebchatError('invalid_options', 'baseUrl and companyId are required');
    this.options = options;
    this.session = new SessionStore(
      options.storage ?? defaultStorage(),
      options.companyId,
      options.channelId,
    );
    this.currentSessionId = this.session.sessionId();
    this.tokens = new VisitorTokens(options);
    this.rest = new RestClient({
      baseUrl: options.baseUrl,
      companyId: options.companyId,
      channelId: options.channelId,
      sessionId: this.currentSessionId,
      fetch: options.fetch,
      visitorTokens: this.tokens,
    });
  }

  /** The visitor's persisted session id (`X-Session-Id`; the `sub` of an anonymous visitor's tokens). */
  get sessionId(): string {
    return this.currentSessionId;
  }

  /** Whether the visitor is identified (a visitor token, or a `getVisitorToken` callback, is in use). */
  get identified(): boolean {
    return this.tokens.identified;
  }

  /** Digital-employee, agent and system messages of the open conversation the visitor has not read yet. */
  get unreadCount(): number {
    return this.lastUnread;
  }

  /** The agents' read mark: the position up to which an agent has read the open conversation (0: nothing yet). */
  get seenPosition(): number {
    return this.readMarks.agent;
  }

  /** Whether an agent has read this visitor message ("Seen"). */
  isSeen(message: ChatMessage): boolean {
    return message.role === 'user' && message.position !== null && message.position <= this.readMarks.agent;
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
    this.tokens.set(token);
    await this.restart();
  }

  /**
   * Forgets the visitor (after sign-out): a fresh anonymous session starts, which sees none of the visitor's
   * conversations. The token callback is dropped too; pass a token to {@link identify} to identify again.
   */
  async resetIdentity(): Promise<void> {
    this.assertOpen();
    this.tokens.clear();
    this.currentSessionId = this.session.resetSessionId();
    this.rest.setSessionId(this.currentSessionId);
    this.session.setCurrentConversationId(null);
    await this.restart();
  }

  /**
   * Marks the open conversation read up to `messageId` (default: its latest message), so `unreadCount` drops and the
   * visitor's other devices start from there. A mark never moves back.
   */
  async markRead(messageId?: string): Promise<void> {
    const store = this.requireStore();
    const target = messageId
      ? store.getById(messageId)
      : [...store.list()].reverse().find((m) => m.id !== null && m.position !== null);
    if (!target?.id || target.position === null || target.position <= this.readMarks.visitor) return;
    this.readMarks = { ...this.readMarks, visitor: target.position };
    this.emitUnread();
    await this.rest.markRead(store.conversationId, target.id);
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
    const store = this.requireStore();
    const message = store.get(key);
    if (!message?.id) throw new WebchatError('not_found', 'no such message in this conversation');
    const stored = await this.rest.rateMessage(store.conversationId, message.id, rating, comment);
    const updated = store.setFeedback(key, { rating: stored.rating, comment: stored.comment });
    if (updated) this.emitChange('message:updated', updated);
    return updated ?? message;
  }

  /** Rates the open conversation once it is closed (1–5, optional comment); `conversation:updated` follows. */
  async submitCsat(score: number, comment?: string): Promise<void> {
    this.requireStore();
    const conversation = this.current!;
    const stored = await this.rest.submitCsat(conversation.id, score, comment);
    if (this.current?.id !== conversation.id) return;
    this.current = { ...this.current, csat: { score: stored.score, comment: stored.comment } };
    this.emit('conversation:updated', this.current);
  }

  /**
   * Asks for a person in the open conversation (`request_human`): it joins the company's queue, or an available
   * agent is assigned at once; the digital employee keeps answering meanwhile. Idempotent. Answers whether agents
   * are in now and, if not, when they are back (`next_open_at`); `conversation:updated` follows.
   */
  async requestHuman(): Promise<BusinessHoursStatus | null> {
    this.requireStore();
    const conversation = this.current!;
    const { business_hours, ...fresh } = await this.rest.requestHuman(conversation.id);
    if (this.current?.id === conversation.id) {
      this.current = { ...this.current, ...fresh };
      this.emit('conversation:updated', this.current);
    }
    return business_hours ?? null;
  }

  /** Whether the company's agents are in now and when they are next (null from a server without business hours). */
  async businessHours(): Promise<BusinessHoursStatus | null> {
    return (await this.rest.config()).business_hours ?? null;
  }

  /** The open conversation, once started. */
  get conversation(): Conversation | null {
    return this.current;
  }

  /** All messages of the open conversation in display order (user, digital employee, agent and system alike). */
  get messages(): readonly ChatMessage[] {
    return this.store?.list() ?? [];
  }

  get state(): ConnectionState {
    return this.connectionState;
  }

  /**
   * The transport of the current (or last) realtime connection — `websocket`, or the `http_stream` / `sse` fallback
   * when a WebSocket could not be opened; `null` before the first connection.
   */
  get transport(): RealtimeTransport | null {
    return this.currentTransport;
  }

  /** False once `loadOlder` reached the first message of the conversation. */
  get canLoadOlder(): boolean {
    return this.hasOlder;
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
    const conversation = await this.resumeOrCreate();
    const endpoints = await this.realtimeEndpoints();
    this.assertOpen(); // close() may have been called while the REST calls were in flight.
    this.client = this.newClient(endpoints);
    const timeoutMs = this.startTimeoutMs();
    this.client.connect();
    // Subscribing only once connected keeps the spec's order: the subscription token is fetched after step 3.
    await this.client.ready(timeoutMs).catch((err: unknown) => {
      throw new WebchatError('connect_failed', `could not connect: ${describe(err)}`, { cause: err });
    });
    await this.withTimeout(this.open(conversation), timeoutMs);
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
    const store = this.requireStore();
    const content = text.trim();
    const attachments = options.attachments ?? [];
    if (content.length === 0 && attachments.length === 0)
      throw new WebchatError('empty_message', 'a message needs text or an attachment');
    return this.enqueue(store, content, attachments);
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
    const store = this.requireStore();
    if (!choice.id || !choice.label.trim())
      throw new WebchatError('empty_message', 'a choice needs an id and a label');
    return this.enqueue(store, choice.label, [], choice);
  }

  /** Shows a new visitor message as `pending` and hands it to the outbox; resolves once the server stored it. */
  private enqueue(
    store: MessageStore,
    text: string,
    attachments: readonly Attachment[],
    choice?: OfferedChoice,
  ): Promise<ChatMessage> {
    const clientMessageId = randomId();
    const promise = new Promise<ChatMessage>((resolve, reject) => {
      this.waiters.set(clientMessageId, { resolve, reject, attempts: 0 });
    });
    const message = store.addPending(clientMessageId, text, attachments, undefined, choice);
    this.emit('message:added', message);
    this.emitList();
    void this.flushOutbox();
    return promise;
  }

  /** The message whose choices the visitor may answer now, if any (see {@link MessageStore.openOffer}). */
  openOffer(): ChatMessage | undefined {
    return this.store?.openOffer();
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
    const store = this.requireStore();
    return this.rest.uploadAttachment(store.conversationId, file, options);
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
    const subscription = this.subscription;
    if (this.closed || !this.subscribed || !subscription || !this.typingThrottle.take()) return;
    const payload: VisitorTyping = { version: SUPPORTED_ENVELOPE_VERSION, event: 'typing' };
    subscription.publish(payload).catch(() => undefined);
  }

  /** Sends a `failed` message again (same `client_message_id`, so it can never appear twice). */
  async retry(key: string): Promise<ChatMessage> {
    const store = this.requireStore();
    const message = store.get(key);
    if (message?.status !== 'failed' || !message.clientMessageId) {
      throw new WebchatError('not_retryable', 'only a failed message can be retried');
    }
    const promise = new Promise<ChatMessage>((resolve, reject) => {
      this.waiters.set(key, { resolve, reject, attempts: 0 });
    });
    const updated = store.setSendStatus(key, 'pending');
    if (updated) this.emitChange('message:updated', updated);
    void this.flushOutbox();
    return promise;
  }

  /**
   * The unread count of the conversation this visitor would resume, over REST and without connecting: for a launcher
   * badge before the chat is opened. 0 when there is none to resume.
   */
  async peekUnread(): Promise<number> {
    const id = this.options.conversationId ?? this.session.currentConversationId();
    if (!id && !this.tokens.identified) return 0;
    const listed = await this.rest.listConversations();
    // The one `start` would resume: the stored one, or a verified visitor's latest open one (resumeOrCreate).
    const conversation = id ? listed.find((c) => c.id === id) : latestOpen(listed);
    return Number(conversation?.unread_count ?? 0);
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
    const store = this.requireStore();
    const oldest = store.oldestStored();
    if (!oldest?.id) return 0;
    const limit = this.pageSize();
    const page = await this.rest.listMessages(store.conversationId, { limit, before: oldest.id });
    this.hasOlder = hasMore(page, limit);
    return this.applySnapshots(store, page.messages).added;
  }

  /** Switches to an earlier conversation of this session (from `listConversations`). */
  async openConversation(conversationId: string): Promise<void> {
    await this.start();
    if (this.current?.id === conversationId) return;
    const conversation = (await this.rest.listConversations()).find((c) => c.id === conversationId);
    if (!conversation) throw new WebchatError('not_found', 'no such conversation in this session');
    await this.withTimeout(this.switchTo(conversation), this.startTimeoutMs());
  }

  /** Starts a fresh conversation and switches to it. */
  async startNewConversation(): Promise<Conversation> {
    await this.start();
    const conversation = await this.rest.createConversation();
    await this.withTimeout(this.switchTo(conversation), this.startTimeoutMs());
    return conversation;
  }

  /** Disconnects and stops all timers. Unsent messages stay `pending` in memory; their promises reject. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.client?.disconnect();
    for (const [key, waiter] of this.waiters) {
      waiter.reject(new WebchatError('closed', 'the webchat was closed before the message was sent'));
      this.waiters.delete(key);
    }
    this.setConnection({ state: 'disconnected', reason: 'closed' });
  }

  // ---- setup -------------------------------------------------------------------------------------------------

  /**
   * Step 1 of the setup order: the conversation the visitor had open, or — for a verified visitor on a device that
   * has none yet — their latest open conversation from any device, or a new one.
   */
  private async resumeOrCreate(): Promise<Conversation> {
    const wanted = this.options.newConversation
      ? null
      : (this.options.conversationId ?? this.session.currentConversationId());
    if (wanted || (this.tokens.identified && !this.options.newConversation)) {
      const listed = await this.rest.listConversations();
      const existing = wanted ? listed.find((c) => c.id === wanted) : latestOpen(listed);
      if (existing) return existing;
      if (this.options.conversationId)
        throw new WebchatError('not_found', 'no such conversation in this session');
    }
    return this.rest.createConversation();
  }

  /** The WebSocket URL and the fallbacks': given in the options, named by the server, or derived from `baseUrl`. */
  private async realtimeEndpoints(): Promise<RealtimeEndpoints> {
    const options = this.options;
    const needsServer =
      !options.realtimeUrl || !options.httpStreamUrl || !options.sseUrl || !options.emulationUrl;
    const config = needsServer ? await this.rest.config() : undefined;
    const realtimeUrl = options.realtimeUrl ?? config!.realtime_url;
    const base = options.baseUrl.replace(/\/+$/, '');
    return {
      websocket:
        realtimeUrl.endsWith(WEBSOCKET_PATH) || realtimeUrl.endsWith(`${WEBSOCKET_PATH}/`)
          ? realtimeUrl
          : `${realtimeUrl.replace(/\/+$/, '')}${WEBSOCKET_PATH}`,
      http_stream: options.httpStreamUrl ?? config?.http_stream_url ?? `${base}${HTTP_STREAM_PATH}`,
      sse: options.sseUrl ?? config?.sse_url ?? `${base}${SSE_PATH}`,
      emulation: options.emulationUrl ?? config?.emulation_url ?? `${base}${EMULATION_PATH}`,
    };
  }

  private newClient(endpoints: RealtimeEndpoints): Centrifuge {
    const order = this.options.transports?.length ? this.options.transports : ALL_TRANSPORTS;
    const transports: TransportEndpoint[] = order.map((transport) => ({
      transport,
      endpoint: endpoints[transport],
    }));
    const client = new Centrifuge(transports, {
      ...this.options.centrifuge,
      ...(this.options.websocket ? { websocket: this.options.websocket } : {}),
      emulationEndpoint: endpoints.emulation,
      // Steps 2-3; centrifuge calls this again when the 15-minute token is due for refresh or after error 109.
      getToken: () => this.tokenOrUnauthorized(() => this.rest.connectToken()),
    });
    client.on('connecting', (ctx) =>
      this.setConnection({ state: 'connecting', code: ctx.code, reason: ctx.reason }),
    );
    client.on('disconnected', (ctx) =>
      this.setConnection({ state: 'disconnected', code: ctx.code, reason: ctx.reason }),
    );
    client.on('connected', (ctx) => {
      const transport = ctx.transport as RealtimeTransport;
      if (transport !== this.currentTransport) {
        this.currentTransport = transport;
        this.emit('transport', transport);
      }
      if (!this.subscribed) this.setConnection({ state: 'connecting', reason: 'subscribing' });
    });
    client.on('error', (ctx) =>
      this.emit('error', new WebchatError('realtime_error', `${ctx.type}: ${ctx.error.message}`)),
    );
    return client;
  }

  /** Steps 4-5: subscribes to the conversation channel; resolves after the first subscription and history load. */
  private open(conversation: Conversation): Promise<void> {
    const client = this.client!;
    this.current = conversation;
    this.store = new MessageStore(conversation.id);
    this.readMarks = { visitor: 0, agent: 0 };
    this.hasOlder = true;
    this.session.setCurrentConversationId(conversation.id);
    this.emit('conversation', conversation);
    this.emitList();

    const store = this.store;
    const subscription = client.newSubscription(conversation.channel, {
      // Called before the first subscribe, after error 109, and when the 24-hour token is due (sub_refresh).
      getToken: () => this.tokenOrUnauthorized(() => this.rest.subscribeToken(conversation.id)),
    });
    this.subscription = subscription;
    let first = true;
    return new Promise<void>((resolve, reject) => {
      subscription.on('subscribed', (ctx) => {
        if (this.store !== store) return;
        const initial = first;
        first = false;
        for (const envelope of inFlightEnvelopes(ctx.data)) this.applyEnvelope(store, envelope);
        const marks = readMarksOf(ctx.data);
        if (marks) this.applyReadMarks(marks);
        // Recovery fills short gaps; when the engine could not recover, REST is the source of truth (docs/protocol.md "Recovery").
        const needsRest = initial || (ctx.wasRecovering && !ctx.recovered);
        void this.afterSubscribed(store, needsRest, !initial).then(
          () => initial && resolve(),
          (err) => (initial ? reject(err) : this.emit('error', asWebchatError(err))),
        );
      });
      subscription.on('subscribing', (ctx) => {
        if (this.store !== store) return;
        this.subscribed = false;
        if (this.connectionState === 'connected')
          this.setConnection({ state: 'connecting', code: ctx.code, reason: ctx.reason });
      });
      subscription.on('unsubscribed', (ctx) => {
        if (this.store !== store) return;
        this.subscribed = false;
        if (ctx.code !== 0) {
          const error = new WebchatError('unsubscribed', `subscription ended: ${ctx.reason} (${ctx.code})`);
          this.setConnection({ state: 'disconnected', code: ctx.code, reason: ctx.reason });
          if (first) reject(error);
        }
      });
      subscription.on('publication', (ctx) => {
        if (this.store !== store) return;
        const read = readEventOf(ctx.data);
        if (read) this.applyReadMarks({ ...this.readMarks, [read.reader]: read.position }, read.message_id);
        else this.applyEnvelope(store, ctx.data);
      });
      subscription.on('error', (ctx) =>
        this.emit('error', new WebchatError('subscription_error', `${ctx.type}: ${ctx.error.message}`)),
      );
      subscription.subscribe();
    });
  }

  private async afterSubscribed(
    store: MessageStore,
    loadFromRest: boolean,
    reconcile: boolean,
  ): Promise<void> {
    if (loadFromRest) {
      const counts = reconcile ? await this.reconcile(store) : await this.loadLatest(store);
      if (this.store !== store) return;
      if (reconcile) this.emit('reconciled', counts);
    }
    if (this.store !== store) return;
    this.subscribed = true;
    this.setConnection({ state: 'connected' });
    void this.flushOutbox();
  }

  private async loadLatest(store: MessageStore): Promise<{ added: number; updated: number }> {
    const latest = await this.rest.listMessages(store.conversationId, { limit: this.pageSize() });
    if (this.store !== store) return { added: 0, updated: 0 };
    this.hasOlder = hasMore(latest, this.pageSize());
    return this.applySnapshots(store, latest.messages);
  }

  /**
   * Reads pages backwards from the newest until a page overlaps what the store already holds, so a long gap is
   * filled completely (bounded to {@link MAX_RECONCILE_PAGES} pages) and nothing appears twice (merge by id).
   */
  private async reconcile(store: MessageStore): Promise<{ added: number; updated: number }> {
    const total = { added: 0, updated: 0 };
    let before: string | undefined;
    for (let page = 0; page < MAX_RECONCILE_PAGES; page++) {
      const result = await this.rest.listMessages(store.conversationId, { limit: this.pageSize(), before });
      if (this.store !== store) return total;
      const overlaps = result.messages.some((m) => store.getById(m.id) !== undefined);
      const counts = this.applySnapshots(store, result.messages);
      total.added += counts.added;
      total.updated += counts.updated;
      if (overlaps || !hasMore(result, this.pageSize()) || result.messages.length === 0) break;
      before = result.nextBefore ?? result.messages[0]?.id;
    }
    return total;
  }

  private async switchTo(conversation: Conversation): Promise<void> {
    const previous = this.subscription;
    this.subscribed = false;
    this.failUnsent('conversation_changed', 'the conversation was switched before the message was sent');
    if (previous) {
      previous.unsubscribe();
      this.client?.removeSubscription(previous);
    }
    await this.open(conversation);
  }

  // ---- applying server state ---------------------------------------------------------------------------------

  private applyEnvelope(store: MessageStore, data: unknown): ApplyResult {
    const result = store.applyEnvelope(data);
    this.emitResult(result);
    // A message that arrives live already final (an agent's or system message) has completed just now too.
    if (result.outcome === 'added' && result.message?.status === 'complete')
      this.emit('message:completed', result.message);
    // System notices announce handovers and closing: the conversation's state changed.
    if (result.outcome === 'added' && result.message?.role === 'system') void this.refreshConversation();
    return result;
  }

  /** Moves the read marks forward only (a late event never moves one back); `seen` fires when the agents' moves. */
  private applyReadMarks(marks: ReadMarks, messageId: string | null = null): void {
    const agentMoved = marks.agent > this.readMarks.agent;
    this.readMarks = {
      visitor: Math.max(this.readMarks.visitor, marks.visitor),
      agent: Math.max(this.readMarks.agent, marks.agent),
    };
    this.emitUnread();
    if (agentMoved) {
      const at = messageId ?? this.store?.list().find((m) => m.position === marks.agent)?.id ?? null;
      this.emit('seen', { position: this.readMarks.agent, messageId: at });
    }
  }

  /** Re-reads the open conversation (status, CSAT) and tells listeners when it changed. */
  private async refreshConversation(): Promise<void> {
    const current = this.current;
    if (!current) return;
    const fresh = await this.rest.getConversation(current.id).catch(() => undefined);
    if (!fresh || this.current?.id !== current.id) return;
    const changed =
      fresh.status !== current.status || JSON.stringify(fresh.csat) !== JSON.stringify(current.csat);
    this.current = { ...current, ...fresh };
    if (changed) this.emit('conversation:updated', this.current);
  }

  /**
   * Unread = the digital-employee, agent and system messages after the visitor's mark; the visitor's own messages
   * move the mark (as the server does when it stores them). Fires `unread` when the number changed.
   */
  private emitUnread(): void {
    const messages = this.messages;
    let mark = this.readMarks.visitor;
    for (const m of messages)
      if (m.role === 'user' && m.position !== null && m.position > mark) mark = m.position;
    this.readMarks = { ...this.readMarks, visitor: mark };
    const count = messages.filter(
      (m) => m.role !== 'user' && m.status === 'complete' && m.position !== null && m.position > mark,
    ).length;
    if (count === this.lastUnread) return;
    this.lastUnread = count;
    this.emit('unread', { count });
  }

  /** Starts over on the same emitter after the visitor changed (listeners stay; nothing of the old chat remains). */
  private async restart(): Promise<void> {
    if (!this.startPromise) return;
    await this.startPromise.catch(() => undefined);
    this.failUnsent('visitor_changed', 'the visitor changed before the message was sent');
    const client = this.client;
    // Its events must not reach listeners: this is no disconnect of the chat, only of the old identity's link.
    client?.removeAllListeners();
    client?.disconnect();
    this.client = null;
    this.subscription = null;
    this.store = null;
    this.current = null;
    this.subscribed = false;
    this.startPromise = null;
    this.setConnection({ state: 'connecting', reason: 'visitor changed' });
    await this.start();
  }

  private applySnapshots(
    store: MessageStore,
    snapshots: readonly unknown[],
  ): { added: number; updated: number } {
    const counts = { added: 0, updated: 0 };
    for (const snapshot of snapshots) {
      const result = store.applySnapshot(snapshot as Parameters<MessageStore['applySnapshot']>[0]);
      if (result.outcome === 'added') counts.added++;
      if (result.outcome === 'updated' || result.outcome === 'completed') counts.updated++;
      // History is not news: REST loads never fire `message:completed` (no screen-reader announcement of old replies).
      this.emitResult(result.outcome === 'completed' ? { ...result, outcome: 'updated' } : result, false);
    }
    this.emitList();
    return counts;
  }

  private emitResult(result: ApplyResult, emitList = true): void {
    const message = result.message;
    if (!message) return;
    if (result.outcome === 'added') this.emit('message:added', message);
    if (result.outcome === 'updated') this.emit('message:updated', message);
    if (result.outcome === 'completed') {
      this.emit('message:updated', message);
      this.emit('message:completed', message);
    }
    // The server has the visitor's message: whatever the outbox was doing for it is settled.
    if (message.clientMessageId) this.settle(message.clientMessageId, message);
    if (emitList) this.emitList();
  }

  private emitChange(event: 'message:updated', message: ChatMessage): void {
    this.emit(event, message);
    this.emitList();
  }

  private emitList(): void {
    this.emit('messages', this.messages);
    this.emitUnread();
    const typing = this.store?.typing() ?? [];
    const keys = typing.map((m) => m.key).join(',');
    if (keys !== this.typingKeys) {
      this.typingKeys = keys;
      this.emit('typing', { typing: typing.length > 0, messages: typing });
    }
  }

  // ---- outbox ------------------------------------------------------------------------------------------------

  /**
   * Publishes pending sends one at a time, in order, while subscribed. Temporary failures (timeouts, a transport
   * that closed mid-publish, server codes flagged temporary) leave the message pending for the next subscription or
   * a short delay; anything else, or too many attempts, marks it failed.
   */
  private async flushOutbox(): Promise<void> {
    if (this.flushing || this.closed) return;
    this.flushing = true;
    try {
      while (this.subscribed && this.subscription && this.store) {
        const next = this.store.unsent()[0];
        if (!next?.clientMessageId) break;
        const outcome = await this.publish(this.subscription, next);
        if (outcome === 'stop') break;
      }
    } finally {
      this.flushing = false;
    }
  }

  private async publish(subscription: Subscription, message: ChatMessage): Promise<'next' | 'stop'> {
    const key = message.clientMessageId!;
    const waiter = this.waiterFor(key);
    waiter.attempts++;
    const payload: SendMessage = {
      version: SUPPORTED_ENVELOPE_VERSION,
      client_message_id: key,
      blocks: sendBlocksOf(message),
    };
    try {
      await subscription.publish(payload);
      const sent = this.store?.setSendStatus(key, 'sent');
      if (sent) this.emitChange('message:updated', sent);
      this.settle(key, sent ?? this.store?.get(key));
      return 'next';
    } catch (raw) {
      const error = raw as { code?: number; message?: string; temporary?: boolean };
      waiter.failingSince ??= Date.now();
      const withinWindow = Date.now() - waiter.failingSince < (this.options.sendRetryWindowMs ?? 120_000);
      const withinAttempts = waiter.attempts < (this.options.maxSendAttempts ?? Number.POSITIVE_INFINITY);
      if (isTemporary(error) && withinWindow && withinAttempts) {
        if (this.subscribed) this.scheduleRetry(waiter.attempts);
        return 'stop';
      }
      this.fail(key, String(error.code ?? 'unknown'), error.message ?? 'the message could not be sent');
      return 'next';
    }
  }

  /** Retries the outbox after the `attempts`-th failure: the first delay doubled per attempt, capped at 15 s. */
  private scheduleRetry(attempts: number): void {
    if (this.retryTimer || this.closed) return;
    const base = this.options.sendRetryDelayMs ?? 1000;
    const delay = Math.min(base * 2 ** Math.max(0, attempts - 1), Math.max(base, MAX_SEND_RETRY_DELAY_MS));
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.flushOutbox();
    }, delay);
  }

  private fail(key: string, code: string, reason: string): void {
    const failed = this.store?.setSendStatus(key, 'failed', { code, message: reason });
    const error = new WebchatError('send_failed', `message not sent: ${reason}`);
    if (failed) {
      this.emitChange('message:updated', failed);
      this.emit('send:failed', { message: failed, error });
    }
    const waiter = this.waiters.get(key);
    this.waiters.delete(key);
    waiter?.reject(error);
  }

  private failUnsent(code: string, reason: string): void {
    for (const message of this.store?.unsent() ?? [])
      if (message.clientMessageId) this.fail(message.clientMessageId, code, reason);
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

  private settle(key: string, message: ChatMessage | undefined): void {
    const waiter = this.waiters.get(key);
    if (!waiter || !message || message.status === 'pending' || message.status === 'failed') return;
    this.waiters.delete(key);
    waiter.resolve(message);
  }

  // ---- helpers -----------------------------------------------------------------------------------------------

  /**
   * Adapts a REST token call to centrifuge's getToken contract (docs/protocol.md "Token refresh and expiry"): a refusal (401/403/404) becomes
   * `UnauthorizedError`, which ends the connection or subscription instead of retrying forever; any other failure
   * (network down, 5xx, 429) is thrown as is, so centrifuge retries with backoff.
   */
  private async tokenOrUnauthorized(fetchToken: () => Promise<{ token: string }>): Promise<string> {
    try {
      return (await fetchToken()).token;
    } catch (err) {
      const error = asWebchatError(err);
      this.emit('error', error);
      if (error.code === 'http_error' && [401, 403, 404].includes(error.status ?? 0))
        throw new UnauthorizedError(error.message);
      throw error;
    }
  }

  private setConnection(change: ConnectionChange): void {
    if (this.closed && change.reason !== 'closed') return;
    if (change.state !== 'connected') this.subscribed = false;
    const same = change.state === this.connectionState;
    this.connectionState = change.state;
    if (!same || change.state !== 'connected') this.emit('connection', change);
  }

  private withTimeout(promise: Promise<void>, ms: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new WebchatError('timeout', `not subscribed within ${ms} ms`)),
        ms,
      );
      promise.then(
        () => {
          clearTimeout(timer);
          resolve();
        },
        (err) => {
          clearTimeout(timer);
          reject(asWebchatError(err));
        },
      );
    });
  }

  private pageSize(): number {
    return this.options.pageSize ?? 50;
  }

  private startTimeoutMs(): number {
    return this.options.startTimeoutMs ?? 30_000;
  }

  private requireStore(): MessageStore {
    this.assertOpen();
    if (!this.store) throw new WebchatError('not_started', 'call start() (or use createWebchat) first');
    return this.store;
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

/** A verified visitor's conversation to resume on a device that has none stored: their newest open one. */
function latestOpen(conversations: readonly Conversation[]): Conversation | undefined {
  let newest: Conversation | undefined;
  for (const c of conversations)
    if (c.status !== 'closed' && (!newest || c.created_at > newest.created_at)) newest = c;
  return newest;
}

/** The server's `next_before` cursor says whether an earlier page exists; without one, a short page is the last. */
function hasMore(
  page: { messages: unknown[]; nextBefore: string | null | undefined },
  limit: number,
): boolean {
  return page.nextBefore === undefined ? page.messages.length >= limit : page.nextBefore !== null;
}

/** Codes worth retrying with the same client_message_id: client-side codes (< 100) and temporary server errors. */
function isTemporary(error: { code?: number; temporary?: boolean }): boolean {
  return error.temporary === true || error.code === undefined || error.code < 100;
}

function describe(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown };
  return `${String(e?.message ?? err)}${e?.code !== undefined ? ` (${String(e.code)})` : ''}`;
}

function asWebchatError(err: unknown): WebchatError {
  if (err instanceof WebchatError) return err;
  const message = err instanceof Error ? err.message : String((err as { message?: unknown })?.message ?? err);
  return new WebchatError('realtime_error', message, { cause: err });
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
