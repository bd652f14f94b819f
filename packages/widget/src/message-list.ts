import { type ChatMessage, type FeedbackRating, type OfferedChoice, openOfferIn } from '@parley/webchat-sdk';
import { builder } from './dom.ts';
import { fill } from './language.ts';
import { type MessageContext, renderMessage } from './message-view.ts';
import { mergeHandoffNotices } from './notices.ts';
import type { WidgetStrings } from './strings/en.ts';

/** What the list asks of the chat for the controls inside messages. */
export interface MessageActions {
  choose(choice: OfferedChoice): void;
  rate(message: ChatMessage, rating: FeedbackRating, comment?: string): Promise<void>;
  retry(message: ChatMessage): void;
  /** Whether an agent has read this visitor message. */
  isSeen(message: ChatMessage): boolean;
  loadOlder(): void;
}

interface Rendered {
  message: ChatMessage;
  element: HTMLElement;
  /** What it was drawn with: drawn again only when one of these changes. */
  drawnWith: string;
}

/**
 * The message log (`role="log"`, not live: the announcer speaks for it): each message drawn once and again only
 * when it changes, in conversation order, with "Show earlier messages" on top, the typing indicator at the end, and
 * a "New messages" line above the first message that was unread when the visitor opened the chat.
 */
export class MessageList {
  readonly element: HTMLElement;
  readonly olderButton: HTMLButtonElement;
  private readonly typing: HTMLElement;
  private readonly separator: HTMLElement;
  private readonly rendered = new Map<string, Rendered>();
  /** Messages after this position that are not the visitor's were unread when the chat was opened. */
  private unreadAfter: number | null = null;

  constructor(
    private readonly doc: Document,
    private readonly strings: WidgetStrings,
    private readonly locale: string,
    private readonly actions: MessageActions,
  ) {
    const el = builder(doc);
    this.element = el('div', {
      class: 'log',
      role: 'log',
      'aria-label': strings.messageLog,
      'aria-live': 'off',
      tabindex: '0',
    });
    this.olderButton = el('button', { type: 'button', class: 'older' }, strings.loadOlder);
    this.olderButton.hidden = true;
    this.olderButton.addEventListener('click', () => actions.loadOlder());
    this.typing = el('div', { class: 'typing', 'aria-hidden': 'true' });
    this.typing.hidden = true;
    this.separator = el('div', {
      class: 'unread-separator',
      role: 'separator',
      'aria-label': strings.newMessages,
    });
    this.separator.append(el('span', { 'aria-hidden': 'true' }, strings.newMessages));
    this.element.append(this.olderButton, this.typing);
  }

  /** Draws `messages` (all of the open conversation, in order), keeping the view at the bottom if it was there. */
  render(messages: readonly ChatMessage[]): void {
    const nearBottom = this.isNearBottom();
    const keep = new Set<string>();
    let previous: Element = this.olderButton;
    // Quick replies show on the open offer only: a message is drawn again when it becomes or stops being it.
    const offerKey = openOfferIn(messages)?.key;
    const handoff = mergeHandoffNotices(messages);
    const seenKey = lastSeen(messages, this.actions.isSeen);
    const firstUnread = this.firstUnread(messages);
    let answered = false;
    let separated = false;
    for (const message of messages) {
      const shown = !message.typing && !handoff.hidden.has(message.key);
      const ratable = answered && isAnswer(message);
      if (message.role === 'user') answered = true;
      if (!shown) continue;
      keep.add(message.key);
      // The line separates read from unread: above the very first message it would separate nothing.
      if (message.key === firstUnread && previous !== this.olderButton) {
        if (previous.nextElementSibling !== this.separator) previous.after(this.separator);
        previous = this.separator;
        separated = true;
      }
      const element = this.draw(message, {
        open: message.key === offerKey,
        ratable,
        seen: message.key === seenKey,
        shownAs: handoff.shownAs.get(message.key),
      });
      if (previous.nextElementSibling !== element) previous.after(element);
      previous = element;
    }
    if (!separated) this.separator.remove();
    for (const [key, entry] of this.rendered) {
      if (keep.has(key)) continue;
      entry.element.remove();
      this.rendered.delete(key);
    }
    if (previous.nextElementSibling !== this.typing) previous.after(this.typing);
    if (nearBottom) this.scrollToEnd();
  }

  /** "Someone is typing" at the end of the log (`messages` show only a typing indicator). */
  showTyping(messages: readonly ChatMessage[]): void {
    this.typing.hidden = messages.length === 0;
    if (messages.length === 0) return;
    const el = builder(this.doc);
    const who = messages[0]!.author?.name;
    const dots = el('span', { class: 'dots' });
    dots.append(el('span'), el('span'), el('span'));
    const label = who ? fill(this.strings.typing, { name: who }) : this.strings.someoneTyping;
    this.typing.replaceChildren(el('span', { class: 'author' }, label), dots);
    this.scrollToEnd();
  }

  /**
   * Marks what was unread when the visitor opened the chat (their read mark's position) with a "New messages" line,
   * and scrolls it into view; `null` removes it.
   */
  markUnreadAfter(position: number | null, messages: readonly ChatMessage[]): void {
    this.unreadAfter = position;
    this.render(messages);
    if (this.separator.isConnected) this.separator.scrollIntoView({ block: 'start' });
    else this.scrollToEnd();
  }

  /** Another conversation: nothing of the previous one stays. */
  clear(): void {
    for (const { element } of this.rendered.values()) element.remove();
    this.rendered.clear();
    this.separator.remove();
    this.unreadAfter = null;
  }

  scrollToEnd(): void {
    this.element.scrollTop = this.element.scrollHeight;
  }

  private isNearBottom(): boolean {
    const log = this.element;
    return log.scrollHeight - log.scrollTop - log.clientHeight < 80;
  }

  private firstUnread(messages: readonly ChatMessage[]): string | undefined {
    const after = this.unreadAfter;
    if (after === null) return undefined;
    return messages.find((m) => m.role !== 'user' && m.position !== null && m.position > after)?.key;
  }

  private draw(
    message: ChatMessage,
    view: Pick<MessageContext, 'open' | 'ratable' | 'seen' | 'shownAs'>,
  ): HTMLElement {
    const drawnWith = `${view.open}|${view.ratable}|${view.seen}|${view.shownAs?.key ?? ''}|${view.shownAs?.updatedAt ?? ''}`;
    let entry = this.rendered.get(message.key);
    if (entry && entry.message === message && entry.drawnWith === drawnWith) return entry.element;
    if (!entry) {
      entry = { message, element: this.doc.createElement('div'), drawnWith };
      this.rendered.set(message.key, entry);
    }
    entry.message = message;
    entry.drawnWith = drawnWith;
    keepFeedbackFocus(entry.element, () =>
      renderMessage(entry.element, message, {
        ...view,
        doc: this.doc,
        strings: this.strings,
        locale: this.locale,
        choose: (choice) => this.actions.choose(choice),
        rate: (rating, comment) => this.actions.rate(message, rating, comment),
        retry: () => this.actions.retry(message),
      }),
    );
    return entry.element;
  }
}

/** A digital-employee or agent message the visitor may rate: finished, stored. */
function isAnswer(m: ChatMessage): boolean {
  return (m.role === 'digital_employee' || m.role === 'agent') && m.status === 'complete' && m.id !== null;
}

/** The key of the visitor's last message an agent has read ("Seen" goes only there). */
function lastSeen(messages: readonly ChatMessage[], isSeen: (m: ChatMessage) => boolean): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) if (isSeen(messages[i]!)) return messages[i]!.key;
  return undefined;
}

/**
 * Redraws a message whose rating controls may have the focus: the focus moves to the thumb now pressed (or the same
 * thumb), so a keyboard user stays where they were.
 */
function keepFeedbackFocus(element: HTMLElement, redraw: () => void): void {
  const focused = (element.getRootNode() as ShadowRoot | Document).activeElement as HTMLElement | null;
  const inFeedback = focused?.closest('.feedback') && element.contains(focused);
  const thumb = inFeedback && focused?.classList.contains('thumb') ? focused.className : null;
  redraw();
  if (!inFeedback) return;
  const next =
    (thumb && element.querySelector<HTMLElement>(`.feedback [class="${thumb}"]`)) ||
    element.querySelector<HTMLElement>('.feedback .thumb[aria-pressed="true"]');
  next?.focus();
}
