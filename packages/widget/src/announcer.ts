import { builder } from './dom.ts';

/**
 * The widget's one polite live region. The message log itself is not live (a streamed reply changes dozens of times a
 * second and would flood a screen reader): each message is announced here once, when it is complete.
 */
export class Announcer {
  readonly element: HTMLElement;

  constructor(doc: Document) {
    this.element = builder(doc)('div', { class: 'sr-only', 'aria-live': 'polite', 'aria-atomic': 'true' });
  }

  announce(text: string): void {
    this.element.textContent = text;
  }
}
