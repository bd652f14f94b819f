import type { DigitalEmployeeListing, DigitalEmployeeOutcomes } from '@parley/wire-types';
import { api } from '../api.ts';
import { h, replaceChildren, uid } from '../dom.ts';

/** The portal outcomes route's answer (docs/outcomes.md "Response"). */
type Outcomes = DigitalEmployeeOutcomes;

/** The windows offered; the route takes any 1–365 (docs/outcomes.md). */
const PERIODS = [7, 30, 90, 365] as const;
const DEFAULT_PERIOD = 30;
/** The portal's largest page (packages/server/src/http/offset-page.ts): a company has far fewer employees. */
const EMPLOYEES_LIMIT = 100;

/** "25% of 4 replies", or "no replies yet" (never a share of nothing). */
const share = (part: number, whole: number, of: string): string =>
  whole > 0 ? `${Math.round((part / whole) * 100)}% of ${whole} ${of}` : `no ${of} yet`;

/** One figure: its name, the number and what the number is out of. */
function figure(name: string, value: string | number, detail: string): HTMLElement {
  return h(
    'div',
    { class: 'outcome' },
    h('dt', {}, name),
    h('dd', { class: 'figure' }, String(value)),
    h('dd', { class: 'muted' }, detail),
  );
}

/** The figures of one employee and window, each as docs/outcomes.md defines it. */
export function outcomeFigures(o: Outcomes): HTMLElement {
  const thumbs = o.thumbs_up + o.thumbs_down;
  return h(
    'dl',
    { class: 'outcomes' },
    figure('Conversations', o.conversations, 'started in this period'),
    figure(
      'Answered from knowledge',
      o.answered_from_knowledge,
      `cited: ${share(o.answered_from_knowledge, o.replies, 'replies')}`,
    ),
    figure('Handed over', o.handed_over, share(o.handed_over, o.conversations, 'conversations')),
    figure(
      'Resolved without a person',
      o.resolved_without_person,
      share(o.resolved_without_person, o.conversations, 'conversations'),
    ),
    figure(
      'Feedback',
      thumbs > 0 ? `${Math.round((o.thumbs_up / thumbs) * 100)}%` : '—',
      thumbs > 0 ? `helpful: ${o.thumbs_up} up, ${o.thumbs_down} down` : 'no thumbs yet',
    ),
    figure(
      'CSAT',
      o.csat_average === null ? '—' : `${o.csat_average.toFixed(1)} / 5`,
      o.csat_count === 0
        ? 'no ratings yet'
        : o.csat_count === 1
          ? 'from 1 rating'
          : `from ${o.csat_count} ratings`,
    ),
  );
}

function labelledSelect(
  label: string,
  options: Array<{ value: string; label: string }>,
  value: string,
): { field: HTMLElement; select: HTMLSelectElement } {
  const id = uid('outcomes');
  const select = h('select', { id }, ...options.map((o) => h('option', { value: o.value }, o.label)));
  select.value = value;
  return { field: h('div', { class: 'field' }, h('label', { for: id }, label), select), select };
}

/**
 * The "Outcomes" section of Settings → Digital employees: what one employee achieved over a chosen period, read
 * from the portal outcomes route (the queries of docs/outcomes.md). `refresh()` re-reads the employees (after one is
 * created, renamed or deleted) and the figures.
 */
export function outcomesSection(): { el: HTMLElement; refresh(): Promise<void> } {
  const figures = h('div', { class: 'outcome-figures', 'aria-live': 'polite', 'aria-busy': 'true' });
  const employee = labelledSelect('Digital employee', [], '');
  const period = labelledSelect(
    'Period',
    PERIODS.map((d) => ({ value: String(d), label: `Last ${d} days` })),
    String(DEFAULT_PERIOD),
  );
  let latest = 0;

  const show = async () => {
    // Only the newest request's answer is shown: a slow earlier one must not overwrite it.
    const request = ++latest;
    figures.setAttribute('aria-busy', 'true');
    let content: HTMLElement;
    if (!employee.select.value) {
      content = h('p', { class: 'muted' }, 'No digital employees yet.');
    } else {
      try {
        const o = await api<Outcomes>(
          'GET',
          `/digital-employees/${employee.select.value}/outcomes?days=${period.select.value}`,
        );
        const since = new Date(o.since).toLocaleDateString();
        content = h(
          'div',
          {},
          h('p', { class: 'muted' }, `Conversations started since ${since}.`),
          outcomeFigures(o),
        );
      } catch (err) {
        content = h('p', { class: 'form-error' }, err instanceof Error ? err.message : 'Failed.');
      }
    }
    if (request !== latest) return;
    replaceChildren(figures, content);
    figures.setAttribute('aria-busy', 'false');
  };

  const refresh = async () => {
    const listing = await api<DigitalEmployeeListing>('GET', `/digital-employees?limit=${EMPLOYEES_LIMIT}`);
    const chosen = employee.select.value;
    replaceChildren(
      employee.select,
      ...listing.items.map((e) =>
        h('option', { value: e.id }, e.is_default ? `${e.name} (default)` : e.name),
      ),
    );
    const keep = listing.items.find((e) => e.id === chosen) ?? listing.items.find((e) => e.is_default);
    employee.select.value = keep?.id ?? listing.items[0]?.id ?? '';
    await show();
  };

  employee.select.addEventListener('change', () => void show());
  period.select.addEventListener('change', () => void show());
  const el = h(
    'div',
    {},
    h(
      'p',
      { class: 'hint' },
      'Counted over the conversations that started in the period; each figure is one query printed in docs/outcomes.md.',
    ),
    h('div', { class: 'outcome-choice' }, employee.field, period.field),
    figures,
  );
  return { el, refresh };
}
