import { ApiError, type Page } from '../api.ts';
import { h, replaceChildren } from '../dom.ts';

export interface Column<T> {
  header: string;
  cell(row: T): Node | string;
  /** Visually secondary on narrow screens. */
  className?: string;
}

export interface PagedTableOptions<T> {
  caption: string;
  columns: Column<T>[];
  load(offset: number, limit: number): Promise<Page<T>>;
  empty: string;
  pageSize?: number;
}

/** A captioned table with Previous/Next paging; the data comes page by page from the server. */
export function pagedTable<T>(options: PagedTableOptions<T>): { el: HTMLElement; reload(): Promise<void> } {
  const limit = options.pageSize ?? 10;
  let offset = 0;
  const body = h('tbody');
  const status = h('p', { class: 'pager-status', 'aria-live': 'polite' });
  const prev = h('button', { type: 'button', class: 'secondary' }, 'Previous');
  const next = h('button', { type: 'button', class: 'secondary' }, 'Next');
  const table = h(
    'table',
    {},
    h('caption', { class: 'visually-hidden' }, options.caption),
    h(
      'thead',
      {},
      h('tr', {}, ...options.columns.map((c) => h('th', { scope: 'col', class: c.className }, c.header))),
    ),
    body,
  );
  const el = h(
    'div',
    { class: 'paged' },
    h('div', { class: 'table-wrap' }, table),
    h('nav', { class: 'pager', 'aria-label': `${options.caption} pages` }, prev, status, next),
  );

  const reload = async () => {
    try {
      let page = await options.load(offset, limit);
      if (page.items.length === 0 && page.total > 0 && offset > 0) {
        // The last row of the last page went away: step back a page.
        offset = Math.max(0, Math.floor((page.total - 1) / limit) * limit);
        page = await options.load(offset, limit);
      }
      replaceChildren(
        body,
        ...(page.items.length === 0
          ? [h('tr', {}, h('td', { colspan: options.columns.length, class: 'empty' }, options.empty))]
          : page.items.map((row) =>
              h(
                'tr',
                {},
                ...options.columns.map((c) =>
                  h('td', { class: c.className, 'data-label': c.header }, c.cell(row)),
                ),
              ),
            )),
      );
      status.textContent =
        page.total === 0 ? '' : `${page.offset + 1}–${page.offset + page.items.length} of ${page.total}`;
      prev.disabled = page.offset === 0;
      next.disabled = page.offset + page.items.length >= page.total;
    } catch (err) {
      replaceChildren(
        body,
        h(
          'tr',
          {},
          h(
            'td',
            { colspan: options.columns.length, class: 'form-error', role: 'alert' },
            err instanceof ApiError ? err.detail : 'Could not load the list.',
          ),
        ),
      );
    }
  };
  prev.addEventListener('click', () => {
    offset = Math.max(0, offset - limit);
    void reload();
  });
  next.addEventListener('click', () => {
    offset += limit;
    void reload();
  });
  return { el, reload };
}
