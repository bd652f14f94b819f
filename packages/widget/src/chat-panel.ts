import type { ChatMessage, Conversation, OfferedChoice, Webchat } from '@parley/webchat-sdk';
import { Announcer } from './announcer.ts';
import { ChatSession } from './chat-session.ts';
import { chatCss } from './chat-styles.ts';
import { ClosedState } from './closed-state.ts';
import { Composer } from './composer.ts';
import { ConversationList } from './conversation-list.ts';
import { builder } from './dom.ts';
import { trapFocus } from './focus-trap.ts';
import { HandoffRow } from './handoff.ts';
import { fill } from './language.ts';
import { MessageList } from './message-list.ts';
import { authorName } from './message-view.ts';
import { noticeText } from './notices.ts';
import type { ChatPanel, PanelHost } from './options.ts';
import { StatusBar } from './status-bar.ts';
import { stringsFor, type WidgetStrings } from './strings.ts';
import { followVisualViewport } from './viewport.ts';

/**
 * The chat panel (loaded with chat.ts): a modal dialog with a header, the connection's status, the message log, the
 * hand-off row, the end of a closed conversation and the composer, driven by one SDK client (chat-session.ts).
 */
export class ChatPanelView implements ChatPanel {
  private readonly doc: Document;
  private readonly strings: WidgetStrings;
  private readonly locale: string;
  private readonly panel: HTMLElement;
  private readonly historyButton: HTMLButtonElement;
  private readonly statusBar: StatusBar;
  private readonly list: MessageList;
  private readonly conversations: ConversationList;
  private readonly closedState: ClosedState;
  private readonly handoff: HandoffRow;
  private readonly composer: Composer;
  private readonly announcer: Announcer;
  private readonly session: ChatSession;
  private readTimer: ReturnType<typeof setTimeout> | null = null;
  private stopViewport: (() => void) | null = null;
  /** Enter was pressed before the chat had started: the text waits in the composer and is sent once it has. */
  private submitWhenStarted = false;
  private isOpen = false;

  constructor(private readonly host: PanelHost) {
    this.doc = host.doc;
    this.strings = stringsFor(host.language, host.options.strings);
    this.locale = host.language.tag;
    host.styles.add(chatCss);
    const s = this.strings;
    const el = builder(this.doc);
    this.panel = el('section', {
      class: 'panel',
      id: 'parley-panel',
      role: 'dialog',
      'aria-modal': 'true',
      'aria-labelledby': 'parley-title',
    });
    this.panel.hidden = true;
    const header = panelHeader(this.doc, s, {
      history: () => void this.toggleConversations(),
      start: () => void this.newConversation(),
      close: () => host.requestClose(),
    });
    this.historyButton = header.historyButton;

    this.statusBar = new StatusBar(this.doc, s, this.panel);
    this.list = new MessageList(this.doc, s, this.locale, {
      choose: (choice) => this.choose(choice),
      rate: async (message, rating, comment) => {
        await this.chat?.rateMessage(message.key, rating, comment);
      },
      retry: (message) => void this.chat?.retry(message.key).catch(() => {}),
      isSeen: (message) => this.chat?.isSeen(message) ?? false,
      loadOlder: () => void this.loadOlder(),
    });
    this.conversations = new ConversationList(this.doc, s, this.locale);
    this.closedState = new ClosedState(this.doc, s, async (score, comment) => {
      await this.chat?.submitCsat(score, comment);
    });
    this.handoff = new HandoffRow(this.doc, s, async () => this.chat?.requestHuman());
    this.composer = new Composer(this.doc, s, host.language.dir, {
      submit: () => this.submit(),
      upload: (file, onProgress) => {
        if (!this.chat) return Promise.reject(new Error('the chat has not started'));
        return this.chat.uploadAttachment(file, { onProgress, name: file.name || 'pasted-image.png' });
      },
      typing: () => this.chat?.typing(),
    });
    this.announcer = new Announcer(this.doc);
    this.panel.append(
      header.element,
      this.statusBar.status,
      this.statusBar.transport,
      this.list.element,
      this.conversations.element,
      this.closedState.element,
      this.handoff.element,
      this.composer.tray,
      this.composer.form,
      this.announcer.element,
    );
    host.root.prepend(this.panel);

    this.panel.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        host.requestClose();
      }
    });
    trapFocus(this.panel);
    this.acceptDroppedFiles();
    this.doc.addEventListener('visibilitychange', this.onVisible);
    this.session = new ChatSession(host.options, this.sessionView(), this.doc.defaultView);
  }

  get chat(): Webchat | null {
    return this.session.chat;
  }

  open(): void {
    this.isOpen = true;
    this.panel.hidden = false;
    this.stopViewport ??= followVisualViewport(this.host.root);
    this.composer.focus();
    const chat = this.chat;
    if (chat && chat.unreadCount > 0) this.list.markUnreadAfter(chat.readPosition, chat.messages);
    else this.list.scrollToEnd();
    this.scheduleMarkRead();
    void this.session.ensureStarted();
  }

  close(): void {
    this.isOpen = false;
    this.panel.hidden = true;
    this.stopViewport?.();
    this.stopViewport = null;
    this.list.markUnreadAfter(null, this.chat?.messages ?? []);
    this.host.showUnread(this.chat?.unreadCount ?? 0);
  }

  destroy(): void {
    if (this.readTimer) clearTimeout(this.readTimer);
    this.stopViewport?.();
    this.doc.removeEventListener('visibilitychange', this.onVisible);
    this.session.destroy();
    this.panel.remove();
  }

  private sessionView() {
    return {
      attach: (chat: Webchat) => this.listen(chat),
      starting: () => this.statusBar.show(this.strings.connecting),
      started: (chat: Webchat) => {
        this.list.olderButton.hidden = !chat.canLoadOlder;
        this.statusBar.connection({ state: chat.state });
        this.showConversation(chat.conversation);
        if (this.isOpen && chat.unreadCount > 0) this.list.markUnreadAfter(chat.readPosition, chat.messages);
        else this.list.render(chat.messages);
        this.scheduleMarkRead();
        if (!this.isOpen) this.host.showUnread(chat.unreadCount);
        if (this.submitWhenStarted) this.submit();
      },
      failed: (retryNow: () => void, offline: boolean) =>
        this.statusBar.show(offline ? this.strings.offline : this.strings.startFailed, retryNow),
    };
  }

  /** Wires an SDK client to the view; events of a client that is no longer the session's are ignored. */
  private listen(chat: Webchat): void {
    const current = () => this.session.chat === chat || this.session.chat === null;
    chat.on('messages', (messages) => {
      if (current()) this.list.render(messages);
    });
    chat.on('typing', ({ messages }) => {
      if (current()) this.list.showTyping(messages);
    });
    chat.on('connection', (change) => {
      if (this.session.chat !== chat) return;
      this.statusBar.connection(change);
      // Terminal for the SDK: start over, with backoff.
      if (change.state === 'disconnected' && change.reason !== 'closed') this.session.ended(chat);
    });
    chat.on('transport', (name) => {
      if (current()) this.statusBar.transportIs(name);
    });
    chat.on('message:completed', (message) => {
      if (current()) this.announce(message);
    });
    chat.on('conversation', (conversation) => {
      this.list.clear();
      this.showConversation(conversation);
    });
    chat.on('conversation:updated', (conversation) => this.showConversation(conversation));
    chat.on('seen', () => this.list.render(chat.messages));
    chat.on('unread', ({ count }) => {
      if (!this.isOpen) this.host.showUnread(count);
      else this.scheduleMarkRead();
    });
  }

  /** Each completed message but the visitor's own, once, in the visitor's language. */
  private announce(message: ChatMessage): void {
    if (message.role === 'user') return;
    const text = message.role === 'system' ? noticeText(message, this.strings, this.locale) : message.text;
    this.announcer.announce(
      fill(this.strings.replyAnnouncement, { name: authorName(message, this.strings), text }),
    );
  }

  private showConversation(conversation: Conversation | null): void {
    this.handoff.show(conversation);
    const closed = this.closedState.show(conversation);
    this.composer.setEnabled(!closed);
  }

  private submit(): void {
    const chat = this.chat;
    this.submitWhenStarted = !chat;
    // A file still uploading goes with the next send, once it is up (its progress bar shows it is not yet).
    if (!chat || this.composer.busy()) return;
    const draft = this.composer.take();
    if (!draft) return;
    // Failures show on the message itself (status `failed` with a Retry button), not as an exception.
    chat.send(draft.text, { attachments: draft.attachments }).catch(() => {});
    this.list.scrollToEnd();
  }

  /** A tapped quick reply or card button: the postback, then the composer has the focus (the buttons are gone). */
  private choose(choice: OfferedChoice): void {
    if (!this.chat) return;
    this.chat.sendPostback(choice).catch(() => {});
    this.composer.focus();
    this.list.scrollToEnd();
  }

  private async loadOlder(): Promise<void> {
    const chat = this.chat;
    if (!chat) return;
    const log = this.list.element;
    const before = log.scrollHeight - log.scrollTop;
    await chat.loadOlder().catch(() => 0);
    this.list.olderButton.hidden = !chat.canLoadOlder;
    log.scrollTop = log.scrollHeight - before;
  }

  private async newConversation(): Promise<void> {
    const chat = this.chat;
    if (!chat) return;
    this.hideConversations();
    await chat.startNewConversation().catch(() => undefined);
    this.list.olderButton.hidden = !chat.canLoadOlder;
    this.composer.focus();
  }

  private async toggleConversations(): Promise<void> {
    if (this.conversations.shown) {
      this.hideConversations();
      return;
    }
    const chat = this.chat;
    if (!chat) return;
    const listed = await chat.listConversations().catch(() => [] as Conversation[]);
    this.list.element.hidden = true;
    this.historyButton.setAttribute('aria-label', this.strings.backToChat);
    this.conversations.show(listed, chat.conversation?.id, (id) => void this.switchTo(id));
  }

  private hideConversations(): void {
    this.conversations.hide();
    this.list.element.hidden = false;
    this.historyButton.setAttribute('aria-label', this.strings.conversations);
  }

  private async switchTo(conversationId: string): Promise<void> {
    this.hideConversations();
    await this.chat?.openConversation(conversationId).catch(() => undefined);
    this.list.olderButton.hidden = !this.chat?.canLoadOlder;
    this.composer.focus();
  }

  /** Files dropped anywhere on the panel join the composer's tray. */
  private acceptDroppedFiles(): void {
    const panel = this.panel;
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
      this.composer.addFiles(files);
    });
  }

  private readonly onVisible = () => this.scheduleMarkRead();

  /** What the visitor sees, shown in an open panel of a visible page, counts as read (shortly after, in one call). */
  private scheduleMarkRead(): void {
    const chat = this.chat;
    if (!chat || this.readTimer || chat.unreadCount === 0) return;
    if (!this.isOpen || this.doc.visibilityState === 'hidden') return;
    this.readTimer = setTimeout(() => {
      this.readTimer = null;
      if (this.chat !== chat || !this.isOpen || this.doc.visibilityState === 'hidden') return;
      void chat.markRead().catch(() => {});
    }, 300);
  }
}

/** The panel's header: its title (which names the dialog), earlier conversations (☰), a new one (+) and close (✕). */
function panelHeader(
  doc: Document,
  s: WidgetStrings,
  actions: { history(): void; start(): void; close(): void },
): { element: HTMLElement; historyButton: HTMLButtonElement } {
  const el = builder(doc);
  const button = (label: string, text: string, action: () => void) => {
    const b = el('button', { type: 'button', 'aria-label': label, title: label }, text);
    b.addEventListener('click', action);
    return b;
  };
  const historyButton = button(s.conversations, '☰', actions.history);
  const element = el('header');
  element.append(
    el('h2', { id: 'parley-title' }, s.title),
    historyButton,
    button(s.newConversation, '+', actions.start),
    button(s.closeChat, '✕', actions.close),
  );
  return { element, historyButton };
}
