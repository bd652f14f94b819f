import { h } from '../../dom.ts';
import { SHORTCUTS } from './shortcuts.ts';

/**
 * The keyboard help overlay: a native modal `<dialog>` (focus moves into it and is trapped there, Escape closes it
 * and focus returns to where it was), titled by its heading.
 */
export function helpDialog(): { el: HTMLDialogElement; open(): void } {
  const el = h(
    'dialog',
    { class: 'shortcuts-help', 'aria-labelledby': 'shortcuts-title' },
    h('h2', { id: 'shortcuts-title' }, 'Keyboard shortcuts'),
    h(
      'dl',
      { class: 'pairs' },
      ...SHORTCUTS.flatMap((s) => [
        h('dt', {}, ...s.keys.flatMap((k, i) => [i > 0 ? ' or ' : '', h('kbd', {}, k)])),
        h('dd', {}, s.label),
      ]),
    ),
    h(
      'p',
      { class: 'muted' },
      'In the composer: Enter sends, Shift+Enter starts a new line, / opens canned responses.',
    ),
    h('form', { method: 'dialog' }, h('button', { type: 'submit' }, 'Close')),
  );
  return {
    el,
    open: () => {
      if (!el.open) el.showModal();
    },
  };
}
