import { h } from '../dom.ts';
import { copyButton } from './widgets.ts';

/**
 * Identifiers (UUIDs, `pcl_…` client ids, key ids): one run of letters, digits, `_` and `-` with a digit in it,
 * longer than a glance — not names or words.
 */
const LONG_ID = /^(?<prefix>[a-z]{2,8}_)?(?<body>(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{16,})$/;
const SHOWN = 8;

/**
 * A value in code font that never breaks in the middle: a long identifier is shortened to its prefix and first
 * characters (`pcl_JoFKLWCi…`), with the full value in its tooltip and a copy button; anything else is shown whole,
 * free to wrap only after punctuation (see `breakable`).
 */
export function shortId(value: string): HTMLElement {
  const match = LONG_ID.exec(value);
  if (!match?.groups) return h('code', { class: 'value' }, ...breakable(value));
  const short = `${match.groups.prefix ?? ''}${match.groups.body!.slice(0, SHOWN)}…`;
  return h(
    'span',
    { class: 'short-id' },
    h('code', { title: value, 'data-full': value }, short),
    copyButton(value, 'Copy'),
  );
}

/**
 * Text with a line-break opportunity (`<wbr>`) after each `/ . : , ; @ ? & = _ -`: with `overflow-wrap: normal` a
 * long value such as a URL wraps as `https://` / `s23.example`, never inside a run of letters and digits.
 */
export function breakable(text: string): Array<string | HTMLElement> {
  return text.split(/(?<=[/.:,;@?&=_-])/).flatMap((part, i) => (i === 0 ? [part] : [h('wbr'), part]));
}
