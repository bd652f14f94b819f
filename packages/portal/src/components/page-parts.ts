import { api } from '../api.ts';
import { type Child, h, replaceChildren } from '../dom.ts';
import { confirmDialog, notice } from './widgets.ts';

/** A page's level-1 title and the lead paragraph that says what the page is for. */
export function pageIntro(title: string, ...lead: Child[]): HTMLElement[] {
  return [h('h1', {}, title), h('p', { class: 'lead' }, ...lead)];
}

/** A part of a page under its own heading, which also names the section for screen readers. */
export function titledSection(id: string, title: string, ...children: Child[]): HTMLElement {
  return h('section', { 'aria-labelledby': id }, h('h2', { id }, title), ...children);
}

export interface StatusArea {
  el: HTMLElement;
  /** Replaces the message shown, so only the outcome of the latest action is announced. */
  say(...message: Parameters<typeof notice>): void;
}

/** Where a page reports the outcome of its actions (a polite live region: announced without stealing focus). */
export function statusArea(): StatusArea {
  const el = h('div', { 'aria-live': 'polite' });
  return { el, say: (...message) => replaceChildren(el, notice(...message)) };
}

/**
 * A button in a table row. Its accessible name names the row ("Delete CI bot"), since the visible label repeats
 * on every row.
 */
export function rowButton(
  label: string,
  accessibleName: string,
  onClick: () => unknown,
  kind: 'secondary' | 'danger' = 'secondary',
): HTMLButtonElement {
  return h(
    'button',
    { type: 'button', class: kind, 'aria-label': accessibleName, onclick: () => void onClick() },
    label,
  );
}

export interface ConfirmDeleteOptions {
  title: string;
  /** What deleting breaks, shown before the user confirms. */
  consequence: string;
  confirmLabel: string;
  /** The portal API path to DELETE. */
  path: string;
  deleted: string;
  status: StatusArea;
  /** Reloads the list, also after a failure: the row may have gone meanwhile. */
  reload: () => Promise<void>;
}

/** Asks first, deletes through the portal API and reports the outcome; does nothing if the user cancels. */
export async function confirmDelete(options: ConfirmDeleteOptions): Promise<void> {
  if (!(await confirmDialog(options.title, options.consequence, options.confirmLabel))) return;
  try {
    await api('DELETE', options.path);
    options.status.say('success', options.deleted);
  } catch (err) {
    options.status.say('error', err instanceof Error ? err.message : 'Delete failed.');
  }
  await options.reload();
}
