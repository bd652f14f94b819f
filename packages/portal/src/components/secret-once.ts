import { type Child, h, replaceChildren } from '../dom.ts';
import { copyButton } from './widgets.ts';

export interface SecretOnceOptions {
  /** The box's heading, e.g. `Secret for “crm”: copy it now`. */
  title: string;
  /** What the secret is for and what to do if it is lost (after "This is the only time the secret is shown."). */
  usage: string;
  secret: string;
  /** The secret's `data-testid` (pages' browser tests read the value through it). */
  testId: string;
  /** Shown between the explanation and the secret (an API client's id). */
  details?: Child;
}

/**
 * A secret rendered once, from the answer that created or rotated it: it lives only in this page's DOM (navigating
 * away or reloading drops it; the server keeps only a digest or a sealed copy and never shows it again). Replaces
 * what `slot` held and takes the focus, so screen readers announce it.
 */
export function showSecretOnce(slot: HTMLElement, options: SecretOnceOptions): void {
  const dismiss = h('button', { type: 'button', class: 'secondary' }, 'I have stored the secret');
  const box = h(
    'section',
    { class: 'notice warning secret-once', role: 'alert', 'aria-labelledby': 'secret-title', tabindex: '-1' },
    h('h2', { id: 'secret-title' }, options.title),
    h('p', {}, h('strong', {}, 'This is the only time the secret is shown. '), options.usage),
    options.details ?? null,
    h(
      'p',
      {},
      h('code', { class: 'secret', 'data-testid': options.testId }, options.secret),
      ' ',
      copyButton(options.secret, 'Copy secret'),
    ),
    h('div', { class: 'actions' }, dismiss),
  );
  dismiss.addEventListener('click', () => box.remove());
  replaceChildren(slot, box);
  box.focus();
}
