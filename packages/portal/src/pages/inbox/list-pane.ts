import type {
  CompanyLabelsView,
  InboxConversationPage,
  InboxQueue,
  InboxSearchPage,
} from '@parley/wire-types';
import { ApiError, api } from '../../api.ts';
import { formatTime, h, replaceChildren } from '../../dom.ts';
import {
  belongs,
  type ConversationView,
  conversationPath,
  handlerLabel,
  type InboxView,
  initialsOf,
  type ListFilter,
  labelNames,
  listQuery,
  listTime,
  STATUSES,
  sortForList,
  unreadOf,
  VIEW_LABEL,
  VIEWS,
  visitorLabel,
} from './model.ts';

export interface ListPaneOptions {
  me: string;
  onOpen(id: string): void;
  isTyping(id: string): boolean;
}

/**
 * The conversation list: views (mine, unassigned, queued, all), status and label filters, search, unread first;
 * kept live from the inbox channel (`upsert`). The workspace filters appear once the server shows it speaks them
 * (labels or snooze fields on its entries); before that the list offers what the server has (open / resolved).
 */
export class ListPane {
  readonly el: HTMLElement;
  readonly filter: ListFilter = { view: 'all', status: 'open', label: '', q: '' };
  readonly known = new Map<string, ConversationView>();
  selected: string | undefined;
  workspace = false;
  private cursor: string | null = null;
  private readonly list = h('ul', { class: 'conversation-list', 'aria-label': 'Conversations' });
  private readonly more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load more');
  private readonly viewButtons = new Map<InboxView, HTMLButtonElement>();
  private readonly status = h('select', { id: 'inbox-status' });
  private readonly label = h('select', { id: 'inbox-label' }, h('option', { value: '' }, 'Any label'));
  private readonly labelField = h(
    'div',
    { class: 'field', hidden: true },
    h('label', { for: 'inbox-label' }, 'Label'),
    this.label,
  );
  private readonly search = h('input', {
    type: 'search',
    id: 'inbox-search',
    placeholder: 'Visitor, email or words',
  });

  constructor(private readonly o: ListPaneOptions) {
    const views = h('div', { class: 'view-tabs', role: 'group', 'aria-label': 'View' });
    for (const v of VIEWS) {
      const b = h(
        'button',
        { type: 'button', class: 'view-tab', 'aria-pressed': String(v === this.filter.view) },
        VIEW_LABEL[v],
      );
      b.addEventListener('click', () => this.setView(v));
      this.viewButtons.set(v, b);
      views.append(b);
    }
    this.statusOptions();
    this.status.addEventListener('change', () => {
      this.filter.status = this.status.value;
      void this.load();
    });
    this.label.addEventListener('change', () => {
      this.filter.label = this.label.value;
      void this.load();
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    this.search.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        this.filter.q = this.search.value.trim();
        void this.load();
      }, 250);
    });
    this.more.addEventListener('click', () => void this.load(true));
    this.el = h(
      'section',
      { class: 'inbox-list', 'aria-label': 'Conversation list' },
      views,
      h(
        'div',
        { class: 'list-filters' },
        h('div', { class: 'field' }, h('label', { for: 'inbox-status' }, 'Status'), this.status),
        this.labelField,
        h('div', { class: 'field search' }, h('label', { for: 'inbox-search' }, 'Search'), this.search),
      ),
      this.list,
      this.more,
    );
  }

  /** Status choices: the workspace's four, or the older server's open / resolved (its `closed`). */
  private statusOptions(): void {
    const choices = this.workspace ? STATUSES : (['open', 'resolved'] as const);
    replaceChildren(
      this.status,
      ...choices.map((s) =>
        h('option', { value: s, selected: s === this.filter.status }, s[0]!.toUpperCase() + s.slice(1)),
      ),
      h('option', { value: '', selected: this.filter.status === '' }, 'Any status'),
    );
  }

  /** Lights up the workspace filters (once, when the server shows it has them) and fills the labels. */
  async enableWorkspace(): Promise<void> {
    if (this.workspace) return;
    this.workspace = true;
    this.statusOptions();
    try {
      this.learnLabels(labelNames(await api<CompanyLabelsView>('GET', '/labels')));
    } catch {
      // No labels route: the filter stays hidden.
    }
  }

  /**
   * Offers labels not yet in the filter: the company's at load, then any a pushed entry carries (a colleague or the
   * API labelled a conversation meanwhile), so the filter never needs a reload.
   */
  private learnLabels(names: readonly string[]): void {
    const known = new Set([...this.label.options].map((o) => o.value));
    const fresh = [...new Set(names)].filter((n) => !known.has(n));
    this.label.append(...fresh.map((n) => h('option', { value: n }, n)));
    this.labelField.hidden = this.label.options.length <= 1;
  }

  setView(v: InboxView): void {
    this.filter.view = v;
    for (const [view, b] of this.viewButtons) b.setAttribute('aria-pressed', String(view === v));
    void this.load();
  }

  /** The ids on screen, top to bottom (for j / k). */
  ids(): string[] {
    return [...this.list.querySelectorAll<HTMLElement>('a.conversation')].map((b) => b.dataset.id!);
  }

  select(id: string | undefined): void {
    this.selected = id;
    for (const b of this.list.querySelectorAll<HTMLElement>('a.conversation')) {
      if (b.dataset.id === id) b.setAttribute('aria-current', 'true');
      else b.removeAttribute('aria-current');
    }
  }

  async load(append = false): Promise<void> {
    const path = this.path(append);
    try {
      // The list, the search and (without workspace views) the queue: each answer read as the list's entries.
      const page: { items: ConversationView[]; next_cursor?: string | null } = await api<
        InboxConversationPage | InboxSearchPage | InboxQueue
      >('GET', path);
      if (!append && page.items.some((c) => 'labels' in c || 'snoozed_until' in c))
        void this.enableWorkspace();
      this.cursor = page.next_cursor ?? null;
      this.more.hidden = !this.cursor;
      for (const c of page.items) this.known.set(c.id, c);
      // The old server has no views: they are applied here to what it sends.
      const shown =
        this.workspace || this.filter.q
          ? page.items
          : page.items.filter((c) => belongs(c, { ...this.filter, status: '' }, this.o.me));
      const items = sortForList(shown).map((c) => this.entry(c));
      if (append) this.list.append(...items);
      else replaceChildren(this.list, ...(items.length ? items : [this.empty()]));
    } catch (err) {
      replaceChildren(
        this.list,
        h(
          'li',
          { class: 'form-error', role: 'alert' },
          err instanceof ApiError ? err.detail : 'Could not load conversations.',
        ),
      );
    }
  }

  private path(append: boolean): string {
    if (this.filter.q) return `/inbox/search?${listQuery(this.filter, false, append ? this.cursor : null)}`;
    if (!this.workspace && this.filter.view === 'queued') return '/inbox/queue';
    return `/inbox/conversations?${listQuery(this.filter, this.workspace, append ? this.cursor : null)}`;
  }

  private empty(): HTMLElement {
    return h('li', { class: 'muted empty' }, this.filter.q ? 'Nothing found.' : 'No conversations here.');
  }

  /** A pushed entry: replaced in place (unread ones to the top), or removed when it no longer belongs. */
  upsert(c: ConversationView): void {
    this.known.set(c.id, c);
    if (this.workspace && c.labels?.length) this.learnLabels(c.labels);
    const old = this.list.querySelector(`li[data-id="${CSS.escape(c.id)}"]`);
    if (!belongs(c, this.filter, this.o.me)) {
      if (old && !this.filter.q) old.remove();
      if (!this.list.querySelector('li[data-id]')) replaceChildren(this.list, this.empty());
      return;
    }
    this.list.querySelector('li.empty')?.remove();
    const el = this.entry(c);
    if (old) old.replaceWith(el);
    if (!old || unreadOf(c) > 0) this.list.prepend(el);
  }

  /** The list's unread badge of a conversation goes once it is read. */
  markRead(id: string): void {
    this.list.querySelector(`a.conversation[data-id="${CSS.escape(id)}"] .unread`)?.remove();
    const c = this.known.get(id);
    if (c) this.known.set(id, { ...c, unread_count: 0, unread: 0 });
  }

  setTyping(id: string, now: boolean): void {
    this.list
      .querySelector(`a.conversation[data-id="${CSS.escape(id)}"] .typing-note`)
      ?.toggleAttribute('hidden', !now);
  }

  private entry(c: ConversationView): HTMLElement {
    const handler = handlerLabel(c);
    const unread = unreadOf(c);
    const name = visitorLabel(c);
    const link = h(
      'a',
      {
        href: conversationPath(c.id),
        class: `conversation${unread > 0 ? ' has-unread' : ''}`,
        'aria-current': c.id === this.selected ? 'true' : null,
        'data-id': c.id,
      },
      h('span', { class: 'avatar', 'aria-hidden': 'true' }, c.visitor ? initialsOf(name) : '?'),
      h(
        'span',
        { class: 'conv-body' },
        h(
          'span',
          { class: 'conv-head' },
          h('span', { class: c.visitor ? 'visitor' : 'visitor muted' }, name),
          h(
            'time',
            { class: 'muted when', datetime: c.updated_at ?? null, title: formatTime(c.updated_at) },
            listTime(c.updated_at),
          ),
        ),
        h('span', { class: 'preview' }, c.last_message ? c.last_message.text : 'No messages yet.'),
        h('span', { class: 'typing-note', hidden: !this.o.isTyping(c.id) }, 'Visitor is typing…'),
        h(
          'span',
          { class: 'conv-tags' },
          unread > 0
            ? h('span', { class: 'badge unread', 'aria-label': `${unread} unread` }, String(unread))
            : null,
          h('span', { class: `badge handler ${handler.kind}` }, handler.text),
          c.status === 'snoozed' || c.status === 'pending'
            ? h('span', { class: `badge status ${c.status}` }, c.status)
            : null,
          ...(c.labels ?? []).map((l) => h('span', { class: 'badge label' }, l)),
        ),
        'match' in c && (c as { match: { excerpt: string } | null }).match
          ? h('span', { class: 'match' }, (c as { match: { excerpt: string } }).match.excerpt)
          : null,
      ),
    );
    link.classList.add('button-like');
    link.addEventListener('click', (event) => {
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
      event.preventDefault();
      this.o.onOpen(c.id);
    });
    return h('li', { 'data-id': c.id }, link);
  }
}
