import type { Conversation } from '@parley/webchat-sdk';
import { builder } from './dom.ts';
import { csatPrompt } from './feedback-ui.ts';
import type { WidgetStrings } from './strings/en.ts';

/** The end of a closed conversation: a note instead of the composer and, until answered, the satisfaction question. */
export class ClosedState {
  readonly element: HTMLElement;
  /** The conversation whose note is on screen (a submitted rating stays, thanking). */
  private shownFor: string | null = null;

  constructor(
    private readonly doc: Document,
    private readonly strings: WidgetStrings,
    private readonly submitCsat: (score: number, comment?: string) => Promise<void>,
  ) {
    this.element = builder(doc)('div', { class: 'closed-slot' });
    this.element.hidden = true;
  }

  /** Whether `conversation` is closed (and the note shows). */
  show(conversation: Conversation | null): boolean {
    const closed = conversation?.status === 'closed';
    if (!closed || !conversation) {
      this.element.hidden = true;
      this.element.replaceChildren();
      this.shownFor = null;
      return false;
    }
    if (this.shownFor === conversation.id) return true;
    this.shownFor = conversation.id;
    const note = builder(this.doc)('p', { class: 'closed-note' }, this.strings.conversationClosed);
    const prompt = conversation.csat ? null : csatPrompt(this.doc, this.strings, this.submitCsat);
    this.element.replaceChildren(note, ...(prompt ? [prompt] : []));
    this.element.hidden = false;
    return true;
  }
}
