import type { AgentList, CompanyLabelsView, InboxConversationDetail } from '@parley/wire-types';
import { api, type SessionInfo } from '../api.ts';
import { statusArea } from '../components/page-parts.ts';
import { h, replaceChildren } from '../dom.ts';
import { InboxAlerts } from './inbox/alerts.ts';
import { ConversationPane } from './inbox/conversation-pane.ts';
import { Drafts } from './inbox/drafts.ts';
import { helpDialog } from './inbox/help-dialog.ts';
import { ListPane } from './inbox/list-pane.ts';
import { InboxLive } from './inbox/live.ts';
import type { Colleague } from './inbox/mentions.ts';
import {
  type ConversationView,
  conversationIdFromPath,
  conversationPath,
  labelNames,
  visitorLabel,
} from './inbox/model.ts';
import { routingPanel } from './inbox/routing-panel.ts';
import { neighbour, shortcutFor } from './inbox/shortcuts.ts';
import { VisitorTypingMarks } from './inbox/visitor-typing.ts';

/**
 * The agent workspace (issue 23): three panes, the conversation list, the open conversation and its visitor, each
 * conversation at its own URL (`/portal/inbox/{id}`, served by the SPA route of pages.ts); keyboard shortcuts;
 * live through the company's inbox channel and the open conversation's channel (docs/routing.md "Live inbox"). On
 * narrow screens the panes become views (`data-view`).
 */
export async function renderInbox(main: HTMLElement): Promise<void> {
  const session = await api<SessionInfo>('GET', '/session');
  const me = session.user;
  main.classList.add('workspace');
  const layout = h('div', { class: 'inbox', 'data-view': 'list' });
  const paneEl = h(
    'section',
    { class: 'transcript-pane', 'aria-label': 'Conversation' },
    h('p', { class: 'muted' }, 'Choose a conversation.'),
  );
  const side = h('div', { class: 'visitor-side' });
  const alerts = new InboxAlerts();
  const routing = routingPanel(me);
  const drafts = new Drafts(safeStorage(), me.id);
  const help = helpDialog();
  let pane: ConversationPane | undefined;
  let labels: string[] = [];
  let colleagues: Promise<Colleague[]> | undefined;
  const typing = new VisitorTypingMarks((id, now) => {
    list.setTyping(id, now);
    if (id === pane?.id) pane.typingNote.hidden = !now;
  });
  const showView = (view: 'list' | 'conversation' | 'visitor') => layout.setAttribute('data-view', view);

  const list = new ListPane({
    me: me.id,
    onOpen: (id) => void open(id, true),
    isTyping: (id) => typing.isTyping(id),
  });
  const live = new InboxLive({
    onConversation: (c) => onEntry(c),
    onVisitorTyping: (id) => typing.mark(id),
    onNote: (note) => {
      if (note.conversation_id === pane?.id) pane.showNote(note);
    },
    onInboxLive: (on) =>
      on ? main.setAttribute('data-inbox-live', 'true') : main.removeAttribute('data-inbox-live'),
    onTrouble: (why) => pane?.connectionTrouble(why),
  });

  const markRead = async (id: string) => {
    if (document.visibilityState === 'hidden') return;
    try {
      await api('POST', `/inbox/conversations/${id}/read`, {});
      list.markRead(id);
    } catch {
      // Not read now; the next message or the next opening marks it.
    }
  };

  const open = async (id: string, push: boolean) => {
    list.select(id);
    live.stop();
    // Not live until the new conversation's subscription is (tests and people watching the pane rely on it).
    paneEl.removeAttribute('data-live');
    alerts.clear();
    if (push && location.pathname !== conversationPath(id)) history.pushState(null, '', conversationPath(id));
    showView('conversation');
    try {
      const detail = await api<InboxConversationDetail>(
        'GET',
        `/inbox/conversations/${encodeURIComponent(id)}`,
      );
      // Another conversation was chosen while this one loaded: showing it now would put the wrong one on screen.
      if (list.selected !== id) return;
      pane = new ConversationPane(paneEl, detail, {
        me: me.id,
        drafts,
        live,
        labels: () => labels,
        colleagues: () => (colleagues ??= loadColleagues()),
        refreshList: () => void list.load(),
        markRead: (cid) => void markRead(cid),
        openConversation: (cid) => void open(cid, true),
        isTyping: (cid) => typing.isTyping(cid),
        showView,
      });
      replaceChildren(side, pane.visitor);
      document.title = `${visitorLabel(detail.conversation)} · Inbox · Parley`;
      if (pane.current && pane.current.labels !== undefined) void loadLabels();
      void markRead(id);
    } catch (err) {
      if (list.selected !== id) return;
      pane = undefined;
      // The pane must not keep showing the previous conversation (no longer live) as if it were this one.
      const status = statusArea();
      status.say('error', err instanceof Error ? err.message : 'Could not load the conversation.');
      replaceChildren(paneEl, status.el);
      replaceChildren(side);
    }
  };

  const loadLabels = async () => {
    try {
      labels = labelNames(await api<CompanyLabelsView>('GET', '/labels'));
    } catch {
      labels = [];
    }
  };

  const onEntry = (c: ConversationView) => {
    const before = list.known.get(c.id);
    // The visitor's message is what they were typing: the indicator goes with it.
    if (c.last_message?.role === 'user' && c.last_message.created_at !== before?.last_message?.created_at)
      typing.clear(c.id);
    alertFor(alerts, me.id, before, c, pane?.id, () => void open(c.id, true));
    list.upsert(c);
    if (c.id === pane?.id) pane.setState(c);
    if (before?.assignee_id !== c.assignee_id) void routing.refresh();
  };

  const onKey = (event: KeyboardEvent) => {
    if (!main.isConnected || help.el.open) return;
    const target = event.target as HTMLElement;
    const action = shortcutFor({
      key: event.key,
      ctrlKey: event.ctrlKey,
      metaKey: event.metaKey,
      altKey: event.altKey,
      targetTag: target.tagName ?? '',
      targetEditable: Boolean(target.isContentEditable),
    });
    if (!action) return;
    event.preventDefault();
    if (action === 'help') return help.open();
    if (action === 'next' || action === 'previous') {
      const id = neighbour(list.ids(), list.selected, action === 'next' ? 1 : -1);
      if (id && id !== list.selected) void open(id, true);
      main.querySelector<HTMLElement>(`a.conversation[data-id="${CSS.escape(id ?? '')}"]`)?.focus();
    } else if (action === 'assign') pane?.clickAction('Take over') || pane?.clickAction('Assign to me');
    else if (action === 'resolve') pane?.clickAction('Resolve');
    else if (action === 'compose') pane?.composer.focus();
  };
  const onPop = () => {
    const id = conversationIdFromPath(location.pathname);
    if (id && id !== list.selected) void open(id, false);
    else if (!id) showView('list');
  };
  document.addEventListener('keydown', onKey);
  window.addEventListener('popstate', onPop);
  // Everything this page started stops when it is left (the router replaces `main`).
  const leaving = new MutationObserver(() => {
    if (main.isConnected) return;
    live.close();
    alerts.clear();
    document.removeEventListener('keydown', onKey);
    window.removeEventListener('popstate', onPop);
    leaving.disconnect();
  });
  leaving.observe(document.body, { childList: true });

  const helpButton = h(
    'button',
    { type: 'button', class: 'secondary small', 'aria-haspopup': 'dialog', onclick: () => help.open() },
    'Shortcuts (?)',
  );
  layout.append(list.el, paneEl, side);
  main.append(
    h(
      'div',
      { class: 'inbox-top' },
      h('h1', {}, 'Inbox'),
      h('div', { class: 'inbox-bar' }, routing.el, alerts.controls, helpButton),
    ),
    layout,
    help.el,
  );
  // Without live access the list still loads; open transcripts say why they are not live.
  await Promise.all([list.load(), routing.refresh(), live.start().catch(() => undefined)]);
  const initial = conversationIdFromPath(location.pathname);
  if (initial) await open(initial, false);
}

/** localStorage, or nothing where the browser refuses it (drafts then live only on screen). */
function safeStorage(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined;
  }
}

/** The colleagues a note can mention: the company's agents and admins (the routing list every agent may read). */
async function loadColleagues(): Promise<Colleague[]> {
  try {
    const { agents } = await api<AgentList>('GET', '/inbox/agents');
    return agents.map((a) => ({ id: a.id, name: a.name, email: a.email }));
  } catch {
    return [];
  }
}

/** A visitor waiting, a conversation given to me, or a new visitor message in one of mine: tell the agent. */
function alertFor(
  alerts: InboxAlerts,
  me: string,
  before: ConversationView | undefined,
  c: ConversationView,
  selected: string | undefined,
  openIt: () => void,
): void {
  const label = visitorLabel(c);
  if (c.queued_at && !c.assignee_id && !before?.queued_at)
    alerts.notify('A visitor is waiting', `${label}: ${c.last_message?.text ?? ''}`, `queue-${c.id}`, openIt);
  else if (c.assignee_id === me && before?.assignee_id !== me)
    alerts.notify('Conversation assigned to you', label, `assigned-${c.id}`, openIt);
  else if (
    c.assignee_id === me &&
    c.last_message?.role === 'user' &&
    c.last_message.created_at !== before?.last_message?.created_at &&
    !(c.id === selected && document.visibilityState === 'visible')
  )
    alerts.notify(`New message from ${label}`, c.last_message.text, `message-${c.id}`, openIt);
}
