import type { Conversation } from '@parley/webchat-sdk';
import { builder } from './dom.ts';
import { fill } from './language.ts';
import { formatWhen } from './notices.ts';
import type { WidgetStrings } from './strings/en.ts';

/** The visitor's earlier conversations (☰), newest first; choosing one switches to it. */
export class ConversationList {
  readonly element: HTMLElement;

  constructor(
    private readonly doc: Document,
    private readonly strings: WidgetStrings,
    private readonly locale: string,
  ) {
    this.element = builder(doc)('div', {
      class: 'conversations',
      role: 'list',
      'aria-label': strings.conversations,
    });
    this.element.hidden = true;
  }

  get shown(): boolean {
    return !this.element.hidden;
  }

  /** Lists `conversations`, `currentId` marked; the first entry gets the focus. */
  show(
    conversations: readonly Conversation[],
    currentId: string | undefined,
    choose: (id: string) => void,
  ): void {
    const el = builder(this.doc);
    this.element.replaceChildren();
    if (conversations.length === 0) this.element.append(el('p', {}, this.strings.noConversations));
    const sorted = [...conversations].sort((a, b) => (a.created_at < b.created_at ? 1 : -1));
    for (const conversation of sorted) {
      const item = el('div', { role: 'listitem' });
      const button = el(
        'button',
        { type: 'button' },
        fill(this.strings.conversationFrom, { date: formatWhen(conversation.created_at, this.locale) }),
      );
      if (conversation.id === currentId) button.setAttribute('aria-current', 'true');
      button.addEventListener('click', () => choose(conversation.id));
      item.append(button);
      this.element.append(item);
    }
    this.element.hidden = false;
    this.element.querySelector<HTMLElement>('button')?.focus();
  }

  hide(): void {
    this.element.hidden = true;
  }
}
