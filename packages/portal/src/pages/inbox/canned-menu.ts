import type { CannedResponseList, CannedResponseView } from '@parley/wire-types';
import { api } from '../../api.ts';
import { h, replaceChildren } from '../../dom.ts';

/** `/query` right before the caret, at the start or after a space. */
const TRIGGER = /(^|\s)\/([a-z0-9_-]*)$/;

/**
 * Canned responses in the reply box (docs/routing.md "Canned responses"): typing `/` opens a menu of the company's
 * saved replies filtered by what follows it; ↑/↓ move, Enter or Tab insert, Escape closes; a click inserts too.
 * The responses are read once per box, when the menu first opens.
 */
export function attachCannedMenu(box: HTMLTextAreaElement): HTMLElement {
  const menu = h('ul', {
    class: 'canned-menu',
    role: 'listbox',
    'aria-label': 'Canned responses',
    hidden: true,
  });
  let all: CannedResponseView[] | undefined;
  let shown: CannedResponseView[] = [];
  let active = 0;
  let trigger: { start: number; end: number } | undefined;

  const close = () => {
    menu.hidden = true;
    trigger = undefined;
    box.removeAttribute('aria-activedescendant');
  };

  const insert = (response: CannedResponseView) => {
    if (!trigger) return;
    box.value = box.value.slice(0, trigger.start) + response.content + box.value.slice(trigger.end);
    const caret = trigger.start + response.content.length;
    box.setSelectionRange(caret, caret);
    close();
    box.focus();
    box.dispatchEvent(new Event('input', { bubbles: true }));
  };

  const render = () => {
    replaceChildren(
      menu,
      ...(shown.length === 0
        ? [
            h(
              'li',
              { class: 'muted', role: 'option', 'aria-disabled': 'true' },
              'No canned response matches.',
            ),
          ]
        : shown.map((r, i) => {
            const item = h(
              'li',
              {
                id: `canned-${r.id}`,
                role: 'option',
                'aria-selected': i === active ? 'true' : 'false',
                class: i === active ? 'active' : null,
              },
              h('strong', {}, `/${r.shortcut}`),
              ` ${r.title}`,
            );
            // mousedown, not click: the box keeps its focus and caret.
            item.addEventListener('mousedown', (event) => {
              event.preventDefault();
              insert(r);
            });
            return item;
          })),
    );
    const current = shown[active];
    if (current) box.setAttribute('aria-activedescendant', `canned-${current.id}`);
  };

  const update = async () => {
    const before = box.value.slice(0, box.selectionStart ?? box.value.length);
    const match = TRIGGER.exec(before);
    if (!match) return close();
    const query = match[2]!;
    trigger = { start: before.length - query.length - 1, end: before.length };
    all ??= (await api<CannedResponseList>('GET', '/canned-responses')).items;
    shown = all
      .filter((r) => r.shortcut.includes(query) || r.title.toLowerCase().includes(query))
      .slice(0, 8);
    active = 0;
    menu.hidden = false;
    render();
  };

  box.setAttribute('aria-autocomplete', 'list');
  box.addEventListener('input', () => void update().catch(close));
  box.addEventListener('blur', () => setTimeout(close, 100));
  box.addEventListener('keydown', (event) => {
    if (menu.hidden) return;
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      if (shown.length === 0) return;
      active = (active + (event.key === 'ArrowDown' ? 1 : shown.length - 1)) % shown.length;
      render();
    } else if ((event.key === 'Enter' || event.key === 'Tab') && shown[active]) {
      event.preventDefault();
      insert(shown[active]!);
    } else if (event.key === 'Escape') {
      event.preventDefault();
      close();
    }
  });
  return menu;
}
