import type { MessageRole } from '@parley/webchat-protocol';
import {
  type ChatMessage,
  type ConnectionChange,
  type Conversation,
  type GetVisitorToken,
  type KeyValueStorage,
  type OfferedChoice,
  openOfferIn,
  type RealtimeTransport,
  Webchat,
  type WebchatOptions,
} from '@parley/webchat-sdk';
import { attachmentComposer, renderAttachments } from './attachments-ui.ts';
import { builder, icon } from './dom.ts';
import { csatPrompt, isRatable, thumbsFor } from './feedback-ui.ts';
import { interactiveBlocksFor } from './interactive-ui.ts';
import { hideUnclosedMarkers, renderMarkdown } from './markdown.ts';
import { defaultStrings, type WidgetStrings } from './strings.ts';
import { widgetCss } from './styles.ts';

/** Options of {@link mountWidget}. */
export interface WidgetOptions {
  baseUrl: string;
  companyId: string;
  channelId?: string;
  /** Overrides for any of the widget's texts (translation). */
  strings?: Partial<WidgetStrings>;
  /** Open the panel at once (it also reopens by itself after a reload if it was open). */
  open?: boolean;
  /** Where to attach the widget's host element. Default: `document.body`. */
  container?: HTMLElement;
  storage?: KeyValueStorage;
  /** Extra SDK options (e.g. reconnect tuning). */
  sdk?: Partial<WebchatOptions>;
  /** A verified visitor's token from your backend (`data-visitor-token`): their conversations on every device. */
  visitorToken?: string;
  /** Returns the visitor's token; called again when it expires or is refused (see the SDK's `getVisitorToken`). */
  getVisitorToken?: GetVisitorToken;
}

/** Handle returned by {@link mountWidget}. */
export interface WidgetHandle {
  open(): void;
  close(): void;
  /** The SDK client once the chat has started (after the first open). */
  readonly chat: Webchat | null;
  /** Removes the widget from the page and disconnects. */
  destroy(): void;
}

const CHAT_ICON =
  'M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H8l-4 4V6a2 2 0 0 1 2-2zm3 6v2h10v-2H7zm0-3v2h10V7H7zm0 6v2h7v-2H7z';
/** The text naming a message's sender when it carries no author name. */
const ROLE_NAMES: Record<MessageRole, keyof WidgetStrings> = {
  user: 'you',
  digital_employee: 'assistant',
  agent: 'agent',
  system: 'system',
};
const START_RETRY_DELAYS_MS = [1000, 2000, 4000, 8000, 15000];
const STABLE_AFTER_MS = 60_000;

/**
 * Adds the launcher button and the chat panel to the page, inside a Shadow DOM so neither side's styles leak.
 * The chat starts on first open; a returning visitor gets their conversation back (the SDK persists the session).
 *
 * @example
 * ```ts
 * import { mountWidget } from '@parley/widget';
 * mountWidget({ baseUrl: 'https://chat.example.com', companyId: '…', channelId: '…' });
 * ```
 */
export function mountWidget(options: WidgetOptions): WidgetHandle {
  return new ChatWidget(options);
}

class ChatWidget implements WidgetHandle {
  chat: Webchat | null = null;
  private readonly options: WidgetOptions;
  private readonly strings: WidgetStrings;
  private readonly doc: Document;
  private readonly host: HTMLElement;
  private readonly els: ReturnType<ChatWidget['build']>;
  /** Each message on screen; `open`: it was drawn as the open offer (its quick replies showing). */
  private readonly rendered = new Map<
    string,
    { message: ChatMessage; element: HTMLElement; open: boolean }
  >();
  private starting = false;
  /** Enter was pressed before the chat had started: the text waits in the composer and is sent once it has. */
  private submitWhenStarted = false;
  private destroyed = false;
  private startAttempt = 0;
  private startTimer: ReturnType<typeof setTimeout> | null = null;
  private readTimer: ReturnType<typeof setTimeout> | null = null;
  /** The message showing "Seen" (the visitor's last one an agent has read). */
  private seenKey: string | null = null;
  /** The conversation whose CSAT prompt is on screen (a submitted one stays, thanking). */
  private csatFor: string | null = null;
  private readonly openKey: string;

  constructor(options: WidgetOptions) {
    this.options = options;
    this.strings = { ...defaultStrings, ...options.strings };
    this.doc = (options.container ?? document.body).ownerDocument;
    this.host = this.doc.createElement('div');
    this.host.setAttribute('data-parley-widget', '');
    const shadow = this.host.attachShadow({ mode: 'open' });
    this.els = this.build(shadow);
    (options.container ?? this.doc.body).append(this.host);
    this.openKey = `parley:${options.companyId}:widget-open`;
    this.doc.defaultView?.addEventListener('online', this.onOnline);
    this.doc.addEventListener('visibilitychange', this.onVisible);
    if (options.open || readFlag(this.openKey)) this.open();
    else void this.peekUnread();
  }

  open(): void {
    const { panel, launcher, input } = this.els;
    panel.hidden = false;
    launcher.setAttribute('aria-expanded', 'true');
    launcher.setAttribute('aria-label', this.strings.closeChat);
    writeFlag(this.openKey, true);
    input.focus();
    this.scrollToEnd();
    this.showUnread(0);
    this.scheduleMarkRead();
    void this.ensureStarted();
  }

  close(): void {
    const { panel, launcher } = this.els;
    panel.hidden = true;
    launcher.setAttribute('aria-expanded', 'false');
    writeFlag(this.openKey, false);
    this.showUnread(this.chat?.unreadCount ?? 0);
    // Focus returns to the control that opened the panel (WAI-ARIA dialog pattern).
    launcher.focus();
  }

  destroy(): void {
    this.destroyed = true;
    if (this.startTimer) clearTimeout(this.startTimer);
    if (this.readTimer) clearTimeout(this.readTimer);
    this.doc.defaultView?.removeEventListener('online', this.onOnline);
    this.doc.removeEventListener('visibilitychange', this.onVisible);
    this.chat?.close();
    this.host.remove();
  }

  // ---- structure -----------------------------------------------------------------------------------------------

  private build(shadow: ShadowRoot) {
    const s = this.strings;
    const el = builder(this.doc);
    const style = el('style');
    style.textContent = widgetCss;
    const root = el('div', { class: 'root' });

    const panel = el('section', {
      class: 'panel',
      id: 'parley-panel',
      role: 'dialog',
      'aria-labelledby': 'parley-title',
    });
    panel.hidden = true;
    const header = el('header');
    const title = el('h2', { id: 'parley-title' }, s.title);
    const historyButton = el(
      'button',
      { type: 'button', 'aria-label': s.conversations, title: s.conversations },
      '☰',
    );
    const newButton = el(
      'button',
      { type: 'button', 'aria-label': s.newConversation, title: s.newConversation },
      '+',
    );
    const closeButton = el('button', { type: 'button', 'aria-label': s.closeChat, title: s.closeChat }, '✕');
    header.append(title, historyButton, newButton, closeButton);

    const status = el('div', { class: 'status', role: 'status' });
    status.hidden = true;
    // Shown only while a WebSocket fallback carries the chat (a network that blocks WebSocket): still live, maybe
    // slower, and the panel's `data-transport` says which one.
    const transport = el('div', { class: 'transport' });
    transport.hidden = true;
    const log = el('div', {
      class: 'log',
      role: 'log',
      'aria-label': s.messageLog,
      'aria-live': 'off',
      tabindex: '0',
    });
    const olderButton = el('button', { type: 'button', class: 'older' }, s.loadOlder);
    olderButton.hidden = true;
    log.append(olderButton);
    const typing = el('div', { class: 'msg typing', 'aria-hidden': 'true' });
    typing.hidden = true;
    const conversations = el('div', { class: 'conversations', role: 'list', 'aria-label': s.conversations });
    conversations.hidden = true;
    // Announces finished replies only; streaming partials would flood a screen reader.
    const live = el('div', { class: 'sr-only', 'aria-live': 'polite', 'aria-atomic': 'true' });

    const form = el('form');
    const inputId = 'parley-input';
    const label = el('label', { class: 'sr-only', for: inputId }, s.inputLabel);
    const input = el('textarea', {
      id: inputId,
      rows: '1',
      placeholder: s.inputPlaceholder,
      'aria-label': s.inputLabel,
    });
    const sendButton = el('button', { type: 'submit' }, s.send);
    // Files go up as soon as they are chosen, pasted or dropped; the next send carries them.
    const attachments = attachmentComposer(this.doc, s, (file, onProgress) => {
      if (!this.chat) return Promise.reject(new Error('the chat has not started'));
      return this.chat.uploadAttachment(file, { onProgress, name: file.name || 'pasted-image.png' });
    });
    form.append(label, attachments.button, attachments.input, input, sendButton);
    // The end of a closed conversation: a note and, until the visitor answered it, the satisfaction question.
    const closedSlot = el('div', { class: 'closed-slot' });
    closedSlot.hidden = true;
    // "Talk to a person" (request_human, docs/routing.md): offered while the digital employee answers and nobody
    // was asked for yet; afterwards a note says the visitor waits (and, outside business hours, until when).
    const handoff = el('div', { class: 'handoff' });
    handoff.hidden = true;
    const handoffButton = el('button', { type: 'button', class: 'handoff-button' }, s.talkToPerson);
    const handoffNote = el('p', { class: 'handoff-note', role: 'status' });
    handoff.append(handoffButton, handoffNote);
    panel.append(
      header,
      status,
      transport,
      log,
      conversations,
      closedSlot,
      handoff,
      attachments.tray,
      form,
      live,
    );

    const launcher = el('button', {
      type: 'button',
      class: 'launcher',
      'aria-controls': 'parley-panel',
      'aria-expanded': 'false',
      'aria-label': s.openChat,
    });
    // Unread replies while the panel is closed (hidden from assistive tech: the launcher's label says it).
    const badge = el('span', { class: 'badge', 'aria-hidden': 'true' });
    badge.hidden = true;
    launcher.append(icon(this.doc, CHAT_ICON), badge);
    root.append(panel, launcher);
    shadow.append(style, root);

    launcher.addEventListener('click', () => (panel.hidden ? this.open() : this.close()));
    closeButton.addEventListener('click', () => this.close());
    panel.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        this.close();
      }
    });
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.submit();
    });
    // The agents see "Visitor is typing…" (the SDK throttles to one publication every 3 s; nothing for a blank draft).
    input.addEventListener('input', () => {
      if (input.value.trim()) this.chat?.typing();
    });
    input.addEventListener('paste', (event) => {
      const files = [...(event.clipboardData?.files ?? [])];
      if (files.length === 0) return;
      event.preventDefault();
      attachments.add(files);
    });
    panel.addEventListener('dragover', (event) => {
      if (!event.dataTransfer?.types.includes('Files')) return;
      event.preventDefault();
      panel.classList.add('dragging');
    });
    panel.addEventListener('dragleave', () => panel.classList.remove('dragging'));
    panel.addEventListener('drop', (event) => {
      panel.classList.remove('dragging');
      const files = [...(event.dataTransfer?.files ?? [])];
      if (files.length === 0) return;
      event.preventDefault();
      attachments.add(files);
    });
    historyButton.addEventListener('click', () => void this.toggleConversations());
    newButton.addEventListener('click', () => void this.newConversation());
    olderButton.addEventListener('click', () => void this.loadOlder());
    handoffButton.addEventListener('click', () => void this.requestHuman());
    return {
      panel,
      launcher,
      input,
      attachments,
      form,
      log,
      typing,
      status,
      transport,
      conversations,
      live,
      olderButton,
      historyButton,
      badge,
      closedSlot,
      handoff,
      handoffButton,
      handoffNote,
    };
  }

  // ---- chat lifecycle ------------------------------------------------------------------------------------------

  private readonly onOnline = () => {
    if (!this.chat && !this.els.panel.hidden) {
      this.startAttempt = 0;
      void this.ensureStarted();
    }
  };

  private async ensureStarted(): Promise<void> {
    if (this.chat || this.starting || this.destroyed) return;
    this.starting = true;
    if (this.startTimer) clearTimeout(this.startTimer);
    this.showStatus(this.strings.connecting);
    const chat = this.newWebchat();
    this.listen(chat);
    try {
      await chat.start();
      // destroy() while starting found no chat to close: close it here, or it would stay connected off the page.
      if (this.destroyed) {
        chat.close();
        return;
      }
      this.chat = chat;
      // The retry budget refills only after a start that lasted, so a server that accepts and then refuses at
      // once cannot make the widget restart forever.
      setTimeout(() => {
        if (this.chat === chat && chat.state === 'connected') this.startAttempt = 0;
      }, STABLE_AFTER_MS);
      this.renderAll(chat.messages);
      this.els.olderButton.hidden = !chat.canLoadOlder;
      this.showConnection({ state: chat.state });
      this.showConversationState(chat.conversation);
      this.scheduleMarkRead();
      if (this.submitWhenStarted) this.submit();
    } catch {
      chat.close();
      // The server or network is not there yet.
      this.retryStart(this.strings.startFailed);
    } finally {
      this.starting = false;
    }
  }

  private restartLater(chat: Webchat): void {
    this.chat = null;
    chat.close();
    this.retryStart(this.strings.offline);
  }

  /** Starts again a few times with backoff, then leaves it to the visitor's "Try again" (shown at once too). */
  private retryStart(statusText: string): void {
    const delay = START_RETRY_DELAYS_MS[this.startAttempt++];
    if (delay !== undefined) this.startTimer = setTimeout(() => void this.ensureStarted(), delay);
    this.showStatus(statusText, () => {
      this.startAttempt = 0;
      void this.ensureStarted();
    });
  }

  private listen(chat: Webchat): void {
    chat.on('messages', (messages) => this.renderAll(messages));
    chat.on('typing', ({ messages }) => this.renderTyping(messages));
    chat.on('connection', (change) => {
      if (this.chat !== chat) return;
      this.showConnection(change);
      // Terminal for the SDK (e.g. a refused token after the server's secret changed): start over, with backoff.
      if (change.state === 'disconnected' && change.reason !== 'closed') this.restartLater(chat);
    });
    chat.on('transport', (name) => {
      if (this.chat === chat || this.chat === null) this.showTransport(name);
    });
    chat.on('message:completed', (message) => {
      if (message.role === 'user') return;
      this.els.live.textContent = `${this.strings.replyAnnouncement} ${this.authorName(message)}: ${message.text}`;
    });
    chat.on('conversation', (conversation) => {
      for (const { element } of this.rendered.values()) element.remove();
      this.rendered.clear();
      this.seenKey = null;
      this.showConversationState(conversation);
    });
    chat.on('conversation:updated', (conversation) => this.showConversationState(conversation));
    chat.on('seen', () => this.renderAll(chat.messages));
    chat.on('unread', ({ count }) => {
      if (this.els.panel.hidden) this.showUnread(count);
      else this.scheduleMarkRead();
    });
  }

  private newWebchat(): Webchat {
    return new Webchat({
      ...this.options.sdk,
      baseUrl: this.options.baseUrl,
      companyId: this.options.companyId,
      channelId: this.options.channelId,
      storage: this.options.storage ?? this.options.sdk?.storage,
      ...(this.options.visitorToken ? { visitorToken: this.options.visitorToken } : {}),
      ...(this.options.getVisitorToken ? { getVisitorToken: this.options.getVisitorToken } : {}),
    });
  }

  // ---- read state, ratings -------------------------------------------------------------------------------------

  private readonly onVisible = () => this.scheduleMarkRead();

  /** Before the chat is opened, the launcher shows what the conversation to resume holds unread (REST only). */
  private async peekUnread(): Promise<void> {
    const count = await this.newWebchat()
      .peekUnread()
      .catch(() => 0);
    if (!this.chat && this.els.panel.hidden && !this.destroyed) this.showUnread(count);
  }

  /** The badge on the launcher, and the launcher's label naming the number for screen readers. */
  private showUnread(count: number): void {
    const { badge, launcher } = this.els;
    badge.hidden = count === 0;
    badge.textContent = count > 99 ? '99+' : String(count);
    const label = this.els.panel.hidden ? this.strings.openChat : this.strings.closeChat;
    launcher.setAttribute('aria-label', count > 0 ? `${label} (${count} ${this.strings.unread})` : label);
  }

  /** What the visitor sees, shown in an open panel of a visible page, counts as read (shortly after, in one call). */
  private scheduleMarkRead(): void {
    const chat = this.chat;
    if (!chat || this.readTimer || chat.unreadCount === 0) return;
    if (this.els.panel.hidden || this.doc.visibilityState === 'hidden') return;
    this.readTimer = setTimeout(() => {
      this.readTimer = null;
      if (this.chat !== chat || this.els.panel.hidden || this.doc.visibilityState === 'hidden') return;
      void chat.markRead().catch(() => {});
    }, 300);
  }

  /** Asks for a person; the button gives way to a note saying the visitor waits, and until when outside hours. */
  private async requestHuman(): Promise<void> {
    const { handoffButton, handoffNote } = this.els;
    handoffButton.disabled = true;
    try {
      const hours = await this.chat?.requestHuman();
      handoffNote.textContent =
        hours && !hours.open && hours.next_open_at
          ? `${this.strings.agentsAway} ${formatDate(hours.next_open_at)}.`
          : this.strings.waitingForPerson;
    } catch {
      handoffButton.disabled = false;
      handoffNote.textContent = this.strings.requestFailed;
    }
  }

  /** The handoff row: the button while the digital employee answers, the waiting note once a person was asked for. */
  private showHandoff(conversation: Conversation | null): void {
    const { handoff, handoffButton, handoffNote } = this.els;
    const open = conversation?.status !== 'closed' && conversation !== null;
    const withAgent = conversation?.handled_by === 'agent';
    handoff.hidden = !open || withAgent;
    handoffButton.hidden = Boolean(conversation?.queued_at);
    handoffButton.disabled = false;
    if (!conversation?.queued_at) handoffNote.textContent = '';
    else if (!handoffNote.textContent) handoffNote.textContent = this.strings.waitingForPerson;
  }

  /** A closed conversation: a note instead of the composer, and the satisfaction question until answered. */
  private showConversationState(conversation: Conversation | null): void {
    this.showHandoff(conversation);
    const { closedSlot, form, input } = this.els;
    const closed = conversation?.status === 'closed';
    form.hidden = closed;
    input.disabled = closed;
    if (!closed || !conversation) {
      closedSlot.hidden = true;
      closedSlot.replaceChildren();
      this.csatFor = null;
      return;
    }
    if (this.csatFor === conversation.id) return;
    this.csatFor = conversation.id;
    const note = this.text('p', this.strings.conversationClosed, 'closed-note');
    const prompt = conversation.csat
      ? null
      : csatPrompt(this.doc, this.strings, async (score, comment) => {
          await this.chat?.submitCsat(score, comment);
        });
    closedSlot.replaceChildren(note, ...(prompt ? [prompt] : []));
    closedSlot.hidden = false;
  }

  private submit(): void {
    const text = this.els.input.value.trim();
    this.submitWhenStarted = !this.chat;
    // A file still uploading goes with the next send, once it is up (its progress bar shows it is not yet).
    if (!this.chat || this.els.attachments.busy()) return;
    const attachments = this.els.attachments.take();
    if (!text && attachments.length === 0) return;
    this.els.input.value = '';
    // Failures show on the message itself (status `failed` with a Retry button), not as an exception.
    this.chat.send(text, { attachments }).catch(() => {});
    this.scrollToEnd();
  }

  /** A tapped quick reply or card button: the postback, then the composer has the focus (the buttons are gone). */
  private choose(choice: OfferedChoice): void {
    if (!this.chat) return;
    this.chat.sendPostback(choice).catch(() => {});
    this.els.input.focus();
    this.scrollToEnd();
  }

  private async loadOlder(): Promise<void> {
    if (!this.chat) return;
    const log = this.els.log;
    const before = log.scrollHeight - log.scrollTop;
    await this.chat.loadOlder().catch(() => 0);
    this.els.olderButton.hidden = !this.chat.canLoadOlder;
    log.scrollTop = log.scrollHeight - before;
  }

  private async newConversation(): Promise<void> {
    if (!this.chat) return;
    this.hideConversations();
    await this.chat.startNewConversation().catch(() => undefined);
    this.els.olderButton.hidden = !this.chat.canLoadOlder;
    this.els.input.focus();
  }

  private async toggleConversations(): Promise<void> {
    const { conversations, log, historyButton } = this.els;
    if (!conversations.hidden) {
      this.hideConversations();
      return;
    }
    if (!this.chat) return;
    const list = await this.chat.listConversations().catch(() => [] as Conversation[]);
    conversations.replaceChildren();
    if (list.length === 0) conversations.append(this.text('p', this.strings.noConversations));
    const sorted = [...list].sort((a, b) => (a.created_at < b.created_at ? 1 : -1));
    for (const conversation of sorted) {
      const button = this.doc.createElement('button');
      button.type = 'button';
      button.setAttribute('role', 'listitem');
      button.textContent = `${this.strings.conversationFrom} ${formatDate(conversation.created_at)}`;
      if (conversation.id === this.chat.conversation?.id) button.setAttribute('aria-current', 'true');
      button.addEventListener('click', () => void this.switchTo(conversation.id));
      conversations.append(button);
    }
    log.hidden = true;
    conversations.hidden = false;
    historyButton.setAttribute('aria-label', this.strings.backToChat);
    (conversations.querySelector('button') as HTMLElement | null)?.focus();
  }

  private hideConversations(): void {
    const { conversations, log, historyButton } = this.els;
    conversations.hidden = true;
    log.hidden = false;
    historyButton.setAttribute('aria-label', this.strings.conversations);
  }

  private async switchTo(conversationId: string): Promise<void> {
    this.hideConversations();
    await this.chat?.openConversation(conversationId).catch(() => undefined);
    this.els.olderButton.hidden = !this.chat?.canLoadOlder;
    this.els.input.focus();
  }

  // ---- rendering -----------------------------------------------------------------------------------------------

  private renderAll(messages: readonly ChatMessage[]): void {
    const { log, olderButton, typing } = this.els;
    const nearBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 80;
    const keep = new Set<string>();
    let previous: Element = olderButton;
    // Quick replies show on the open offer only: a message is drawn again when it becomes or stops being it.
    const offerKey = openOfferIn(messages)?.key;
    for (const message of messages) {
      if (message.typing) continue;
      keep.add(message.key);
      const open = message.key === offerKey;
      let entry = this.rendered.get(message.key);
      if (!entry) {
        entry = { message, element: this.doc.createElement('div'), open };
        this.rendered.set(message.key, entry);
        this.fillMessage(entry.element, message, open);
      } else if (entry.message !== message || entry.open !== open) {
        entry.message = message;
        entry.open = open;
        this.fillMessage(entry.element, message, open);
      }
      if (previous.nextElementSibling !== entry.element) previous.after(entry.element);
      previous = entry.element;
    }
    for (const [key, entry] of this.rendered) {
      if (!keep.has(key)) {
        entry.element.remove();
        this.rendered.delete(key);
      }
    }
    if (typing.parentElement !== log || previous.nextElementSibling !== typing) previous.after(typing);
    this.markSeen(messages);
    if (nearBottom) this.scrollToEnd();
  }

  /** "Seen" under the visitor's last message an agent has read. */
  private markSeen(messages: readonly ChatMessage[]): void {
    const chat = this.chat;
    const last = chat ? [...messages].reverse().find((m) => chat.isSeen(m)) : undefined;
    const key = last?.key ?? null;
    const current = key ? this.rendered.get(key)?.element : undefined;
    if (key !== this.seenKey) {
      if (this.seenKey) this.rendered.get(this.seenKey)?.element.querySelector('.seen')?.remove();
      this.seenKey = key;
    }
    if (current && !current.querySelector('.seen'))
      current.append(this.text('span', this.strings.seen, 'meta seen'));
  }

  private fillMessage(element: HTMLElement, message: ChatMessage, open: boolean): void {
    // The rating controls that had the focus are replaced below: the focus moves to the thumb now pressed (or the
    // same thumb), so a keyboard user stays where they were.
    const focused = (this.host.shadowRoot?.activeElement as HTMLElement | null) ?? null;
    const inFeedback = focused?.closest('.feedback') && element.contains(focused);
    const thumb = inFeedback && focused?.classList.contains('thumb') ? focused.className : null;
    this.renderMessage(element, message, open);
    if (!inFeedback) return;
    const next =
      (thumb && element.querySelector<HTMLElement>(`.feedback [class="${thumb}"]`)) ||
      element.querySelector<HTMLElement>('.feedback .thumb[aria-pressed="true"]');
    next?.focus();
  }

  private renderMessage(element: HTMLElement, message: ChatMessage, open: boolean): void {
    element.className = `msg ${message.role}${message.status === 'failed' ? ' failed' : ''}`;
    element.dataset.status = message.status;
    element.dataset.key = message.key;
    const children: Node[] = [];
    if (message.role !== 'user') children.push(this.text('span', this.authorName(message), 'author'));
    const body = this.doc.createElement('div');
    body.className = 'body';
    // A tapped choice shows its label as written, not as markdown.
    if (message.blocks[0]?.type === 'postback') body.textContent = message.text;
    else
      body.append(
        renderMarkdown(
          this.doc,
          message.status === 'partial' ? hideUnclosedMarkers(message.text) : message.text,
        ),
      );
    children.push(body);
    const files = renderAttachments(this.doc, message.blocks);
    if (files) children.push(files);
    children.push(
      ...interactiveBlocksFor(this.doc, message, this.strings, { open, choose: (c) => this.choose(c) }),
    );
    if (message.error) children.push(this.text('div', message.error.message, 'error'));
    if (isRatable(message)) {
      children.push(
        thumbsFor(this.doc, message, this.strings, async (rating, comment) => {
          await this.chat?.rateMessage(message.key, rating, comment);
        }),
      );
    }
    if (message.status === 'pending' || message.status === 'sent')
      children.push(this.text('span', this.strings.sending, 'meta'));
    if (message.status === 'failed') {
      const meta = this.text('span', `${this.strings.notSent} `, 'meta');
      if (message.sendError) meta.title = message.sendError.message;
      const retry = this.doc.createElement('button');
      retry.type = 'button';
      retry.textContent = this.strings.retry;
      retry.addEventListener('click', () => void this.chat?.retry(message.key).catch(() => {}));
      meta.append(retry);
      children.push(meta);
    }
    element.replaceChildren(...children);
  }

  private renderTyping(messages: ChatMessage[]): void {
    const { typing } = this.els;
    typing.hidden = messages.length === 0;
    if (messages.length === 0) return;
    const who = messages[0]!.author?.name;
    const dots = this.doc.createElement('span');
    dots.className = 'dots';
    dots.append(
      this.doc.createElement('span'),
      this.doc.createElement('span'),
      this.doc.createElement('span'),
    );
    typing.replaceChildren(
      this.text('span', who ? `${who} ${this.strings.typing}` : this.strings.someoneTyping, 'author'),
      dots,
    );
    this.scrollToEnd();
  }

  /** Names a fallback transport in the panel; WebSocket, the normal case, shows nothing. */
  private showTransport(name: RealtimeTransport): void {
    const { panel, transport } = this.els;
    panel.dataset.transport = name;
    transport.hidden = name === 'websocket';
    transport.textContent =
      name === 'http_stream'
        ? this.strings.transportHttpStream
        : name === 'sse'
          ? this.strings.transportSse
          : '';
  }

  private showConnection(change: Pick<ConnectionChange, 'state'>): void {
    if (change.state === 'connected') this.hideStatus();
    else if (change.state === 'connecting') this.showStatus(this.strings.reconnecting);
    else this.showStatus(this.strings.offline);
    this.els.panel.dataset.connection = change.state;
  }

  private showStatus(text: string, action?: () => void): void {
    const { status } = this.els;
    status.replaceChildren(this.doc.createTextNode(text));
    if (action) {
      const button = this.doc.createElement('button');
      button.type = 'button';
      button.textContent = this.strings.tryAgain;
      button.addEventListener('click', action);
      status.append(button);
    }
    status.hidden = false;
  }

  private hideStatus(): void {
    this.els.status.hidden = true;
    this.els.status.replaceChildren();
  }

  private authorName(message: ChatMessage): string {
    if (message.author?.name) return message.author.name;
    // A role a newer server added has no name here: it reads as the assistant's.
    return this.strings[ROLE_NAMES[message.role]] ?? this.strings.assistant;
  }

  private text(tag: string, text: string, className?: string): HTMLElement {
    const node = this.doc.createElement(tag);
    node.textContent = text;
    if (className) node.className = className;
    return node;
  }

  private scrollToEnd(): void {
    const { log } = this.els;
    log.scrollTop = log.scrollHeight;
  }
}

function formatDate(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

function readFlag(key: string): boolean {
  try {
    return globalThis.sessionStorage?.getItem(key) === '1';
  } catch {
    return false;
  }
}

function writeFlag(key: string, value: boolean): void {
  try {
    if (value) globalThis.sessionStorage?.setItem(key, '1');
    else globalThis.sessionStorage?.removeItem(key);
  } catch {
    // Remembering the open panel is a nicety; a blocked sessionStorage changes nothing else.
  }
}
