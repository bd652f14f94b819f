import type { AuditPage } from '@parley/wire-types';
import { ApiError, api } from '../api.ts';
import { breakable, shortId } from '../components/short-id.ts';
import { formatTime, h, replaceChildren, uid } from '../dom.ts';

const KNOWN_TYPES = [
  'portal.signed_in',
  'portal.sign_in_failed',
  'portal.signed_out',
  'portal_user.created',
  'portal_user.renamed',
  'api_client.created',
  'api_client.deleted',
  'token.issued',
  'client_auth.failed',
  'connector.created',
  'connector.api_key_rotated',
  'connector.deleted',
  'company.allowed_origins_changed',
  'channel.created',
  'digital_employee.created',
  'digital_employee.updated',
  'digital_employee.default_changed',
  'digital_employee.deleted',
];

const PAGE_SIZE = 20;

/**
 * Settings → Audit log: newest first, filtered by event type and subject, paged with a time cursor (Older /
 * Newer keep a stack of cursors, so going back shows exactly the page seen before).
 */
export async function renderAudit(main: HTMLElement): Promise<void> {
  const typeId = uid('audit-type');
  const subjectId = uid('audit-subject');
  const typeInput = h('input', {
    id: typeId,
    name: 'type',
    list: `${typeId}-list`,
    maxlength: 100,
    placeholder: 'any type',
  });
  const subjectInput = h('input', {
    id: subjectId,
    name: 'subject',
    maxlength: 300,
    placeholder: 'any subject (client ID, connector ID…)',
  });
  const filters = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter the audit log' },
    h(
      'div',
      { class: 'field' },
      h('label', { for: typeId }, 'Event type'),
      typeInput,
      h('datalist', { id: `${typeId}-list` }, ...KNOWN_TYPES.map((t) => h('option', { value: t }))),
    ),
    h('div', { class: 'field' }, h('label', { for: subjectId }, 'Subject'), subjectInput),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit', class: 'primary' }, 'Filter'),
      h('button', { type: 'reset', class: 'secondary' }, 'Clear'),
    ),
  );
  const body = h('tbody');
  const newer = h('button', { type: 'button', class: 'secondary' }, 'Newer');
  const older = h('button', { type: 'button', class: 'secondary' }, 'Older');
  const status = h('p', { class: 'pager-status', 'aria-live': 'polite' });
  /** Cursors of the pages before the current one; the last entry is the current page's cursor. */
  const cursors: Array<string | undefined> = [undefined];
  let nextBefore: string | null = null;

  const load = async () => {
    const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (typeInput.value.trim()) params.set('type', typeInput.value.trim());
    if (subjectInput.value.trim()) params.set('subject', subjectInput.value.trim());
    const cursor = cursors.at(-1);
    if (cursor) params.set('before', cursor);
    try {
      const page = await api<AuditPage>('GET', `/audit?${params}`);
      nextBefore = page.next_before;
      replaceChildren(
        body,
        ...(page.items.length
          ? page.items.map((e) =>
              h(
                'tr',
                {},
                h(
                  'td',
                  { 'data-label': 'When' },
                  h('time', { datetime: e.created_at }, formatTime(e.created_at)),
                ),
                h('td', { 'data-label': 'Event' }, h('code', { class: 'event' }, e.type)),
                h('td', { 'data-label': 'Actor' }, e.actor_label ?? '—'),
                h('td', { 'data-label': 'Subject' }, e.subject ? shortId(e.subject) : '—'),
                h('td', { 'data-label': 'IP' }, e.ip ?? '—'),
                h('td', { 'data-label': 'Details' }, detailsList(e.details)),
              ),
            )
          : [h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'No events match.'))]),
      );
      status.textContent = `Page ${cursors.length}`;
      newer.disabled = cursors.length <= 1;
      older.disabled = !nextBefore;
    } catch (err) {
      replaceChildren(
        body,
        h(
          'tr',
          {},
          h(
            'td',
            { colspan: 6, class: 'form-error', role: 'alert' },
            err instanceof ApiError ? err.detail : 'Could not load the log.',
          ),
        ),
      );
    }
  };

  filters.addEventListener('submit', (e) => {
    e.preventDefault();
    cursors.splice(0, cursors.length, undefined);
    void load();
  });
  filters.addEventListener('reset', () => {
    setTimeout(() => {
      cursors.splice(0, cursors.length, undefined);
      void load();
    });
  });
  older.addEventListener('click', () => {
    if (!nextBefore) return;
    cursors.push(nextBefore);
    void load();
  });
  newer.addEventListener('click', () => {
    if (cursors.length <= 1) return;
    cursors.pop();
    void load();
  });

  main.append(
    h('h1', {}, 'Audit log'),
    h(
      'p',
      { class: 'lead' },
      'Who did what, newest first. Events name identifiers and versions only — never a secret or key.',
    ),
    filters,
    h(
      'div',
      { class: 'paged' },
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'audit' },
          h('caption', { class: 'visually-hidden' }, 'Audit events'),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...['When', 'Event', 'Actor', 'Subject', 'IP', 'Details'].map((c) =>
                h('th', { scope: 'col' }, c),
              ),
            ),
          ),
          body,
        ),
      ),
      h('nav', { class: 'pager', 'aria-label': 'Audit log pages' }, newer, status, older),
    ),
  );
  await load();
}

/**
 * An event's details as `key value` lines: identifiers shortened (full value on hover and copy), lists joined
 * with spaces, so the text wraps between values instead of in the middle of one.
 */
function detailsList(details: Record<string, unknown>): HTMLElement | string {
  const entries = Object.entries(details);
  if (entries.length === 0) return '—';
  const value = (v: unknown): Node | string =>
    typeof v === 'string'
      ? shortId(v)
      : Array.isArray(v) && v.every((x) => typeof x === 'string')
        ? h('span', { class: 'values' }, ...v.map((x) => h('code', {}, ...breakable(x))))
        : h('code', {}, ...breakable(JSON.stringify(v)));
  return h(
    'dl',
    { class: 'details' },
    ...entries.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, value(v))]),
  );
}
