import type { Conversation } from '@parley/webchat-sdk';
import { builder } from './dom.ts';
import type { WidgetStrings } from './strings/en.ts';

/**
 * "Talk to a person" (request_human, docs/routing.md): offered while the digital employee answers and nobody was
 * asked for yet. Once asked, the button goes and the conversation's own hand-off notice says the rest (waiting, and
 * until when outside business hours; then who joined — notices.ts); only a failed request is said here.
 */
export class HandoffRow {
  readonly element: HTMLElement;
  private readonly button: HTMLButtonElement;
  private readonly note: HTMLElement;

  constructor(
    doc: Document,
    private readonly strings: WidgetStrings,
    request: () => Promise<unknown>,
  ) {
    const el = builder(doc);
    this.element = el('div', { class: 'handoff' });
    this.element.hidden = true;
    this.button = el('button', { type: 'button', class: 'handoff-button' }, strings.talkToPerson);
    this.note = el('p', { class: 'handoff-note', role: 'status' });
    this.element.append(this.button, this.note);
    this.button.addEventListener('click', () => {
      this.button.disabled = true;
      this.note.textContent = '';
      request().then(
        () => {
          this.button.hidden = true;
        },
        () => {
          this.button.disabled = false;
          this.note.textContent = this.strings.requestFailed;
        },
      );
    });
  }

  /** Shown while the conversation is open, with the digital employee, and nobody was asked for yet. */
  show(conversation: Conversation | null): void {
    const offered =
      conversation !== null &&
      conversation.status !== 'closed' &&
      conversation.handled_by !== 'agent' &&
      !conversation.queued_at;
    this.element.hidden = !offered;
    this.button.hidden = !offered;
    this.button.disabled = false;
    if (offered) this.note.textContent = '';
  }
}
