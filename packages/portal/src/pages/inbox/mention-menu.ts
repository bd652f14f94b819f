import { h, replaceChildren } from '../../dom.ts';
import { type Colleague, insertMention, matchColleagues, mentionAt } from './mentions.ts';

/**
 * `@` in a note opens the colleagues who can be mentioned (ARIA combobox pattern, like the `/` canned menu): ↑/↓
 * move, Enter or Tab insert, Escape closes, a click inserts. `enabled()` says whether the composer is in note mode.
 * Picked colleagues are remembered for the note's `mentions`.
 */
export function attachMentionMenu(
  box: HTMLTextAreaElement,
  colleagues: () => Promise<Colleague[]>,
  enabled: () => boolean,
): { el: HTMLElement; picked: Colleague[] } {
  const menu = h('ul', {
    class: 'canned-menu mention-menu',
    role: 'listbox',
    'aria-label': 'Colleagues',
    hidden: true,
  });
  const picked: Colleague[] = [];
  let shown: Colleague[] = [];
  let active = 0;
  let start = -1;
  const close = () => {
    menu.hidden = true;
    start = -1;
  };
  const pick = (c: Colleague) => {
    const next = insertMention(box.value, start, box.selectionStart ?? box.value.length, c);
    box.value = next.text;
    box.setSelectionRange(next.caret, next.caret);
    picked.push(c);
    close();
    box.focus();
    box.dispatchEvent(new Event('input', { bubbles: true }));
  };
  const render = () =>
    replaceChildren(
      menu,
      ...(shown.length === 0
        ? [h('li', { class: 'muted', role: 'option', 'aria-disabled': 'true' }, 'No colleague matches.')]
        : shown.map((c, i) => {
            const item = h(
              'li',
              {
                role: 'option',
                'aria-selected': i === active ? 'true' : 'false',
                class: i === active ? 'active' : null,
              },
              h('strong', {}, c.name ?? c.email),
              c.name ? ` ${c.email}` : '',
            );
            // mousedown, not click: the box keeps its focus and caret.
            item.addEventListener('mousedown', (event) => {
              event.preventDefault();
              pick(c);
            });
            return item;
          })),
    );
  const update = async () => {
    const at = enabled() ? mentionAt(box.value, box.selectionStart ?? box.value.length) : undefined;
    if (!at) return close();
    start = at.start;
    shown = matchColleagues(await colleagues(), at.query);
    active = 0;
    menu.hidden = false;
    render();
  };
  box.addEventListener('input', () => void update().catch(close));
  box.addEventListener('blur', () => setTimeout(close, 100));
  box.addEventListener('keydown', (event) => {
    if (menu.hidden) return;
    if ((event.key === 'ArrowDown' || event.key === 'ArrowUp') && shown.length > 0) {
      event.preventDefault();
      active = (active + (event.key === 'ArrowDown' ? 1 : shown.length - 1)) % shown.length;
      render();
    } else if ((event.key === 'Enter' || event.key === 'Tab') && shown[active]) {
      event.preventDefault();
      pick(shown[active]!);
    } else if (event.key === 'Escape') {
      event.preventDefault();
      close();
    }
  });
  return { el: menu, picked };
}
