import { h, replaceChildren } from '../../dom.ts';

/**
 * Quick replies as chips (docs/design.md "Interactive blocks"): the agent types a label and presses Enter (or
 * "Add"), each label shows as a removable chip, at most `max` and no duplicates. The visitor sees them as buttons
 * under the reply.
 */
export class QuickReplyChips {
  readonly el: HTMLElement;
  private labels: string[] = [];
  private readonly list = h('ul', { class: 'chips', 'aria-label': 'Quick replies' });
  private readonly input = h('input', {
    type: 'text',
    class: 'chip-input',
    maxlength: 80,
    'aria-label': 'Add a quick reply',
    placeholder: 'Quick reply…',
  });

  constructor(private readonly max: number) {
    const add = h('button', { type: 'button', class: 'secondary small' }, 'Add');
    add.addEventListener('click', () => this.addTyped());
    this.input.addEventListener('keydown', (event) => {
      if (event.key !== 'Enter') return;
      event.preventDefault();
      this.addTyped();
    });
    this.el = h(
      'div',
      { class: 'quick-reply-chips' },
      this.list,
      h('span', { class: 'chip-add' }, this.input, add),
    );
    this.render();
  }

  get values(): string[] {
    return [...this.labels];
  }

  clear(): void {
    this.labels = [];
    this.render();
  }

  private addTyped(): void {
    const label = this.input.value.trim();
    if (label && !this.labels.includes(label) && this.labels.length < this.max) this.labels.push(label);
    this.input.value = '';
    this.render();
  }

  private render(): void {
    replaceChildren(
      this.list,
      ...this.labels.map((label, i) =>
        h(
          'li',
          { class: 'chip' },
          label,
          h(
            'button',
            {
              type: 'button',
              class: 'chip-remove',
              'aria-label': `Remove quick reply ${label}`,
              onclick: () => {
                this.labels.splice(i, 1);
                this.render();
              },
            },
            '×',
          ),
        ),
      ),
    );
    const full = this.labels.length >= this.max;
    this.input.disabled = full;
    this.input.placeholder = full ? `At most ${this.max} quick replies` : 'Add a quick reply…';
  }
}

/**
 * Files waiting to go with the next reply: added by the picker, by dropping them on the composer or by pasting
 * them; shown as removable chips; uploaded on send (the server checks type and size).
 */
export class PendingFiles {
  readonly el = h('ul', { class: 'chips pending-files', 'aria-label': 'Files to send' });
  private files: File[] = [];

  get all(): File[] {
    return [...this.files];
  }

  add(files: Iterable<File>): void {
    for (const f of files) if (this.files.length < 20) this.files.push(f);
    this.render();
  }

  clear(): void {
    this.files = [];
    this.render();
  }

  private render(): void {
    this.el.hidden = this.files.length === 0;
    replaceChildren(
      this.el,
      ...this.files.map((f, i) =>
        h(
          'li',
          { class: 'chip' },
          `📎 ${f.name}`,
          h(
            'button',
            {
              type: 'button',
              class: 'chip-remove',
              'aria-label': `Remove file ${f.name}`,
              onclick: () => {
                this.files.splice(i, 1);
                this.render();
              },
            },
            '×',
          ),
        ),
      ),
    );
  }
}
