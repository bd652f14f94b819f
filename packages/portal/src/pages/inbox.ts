import {
  type AttachmentBlock,
  acceptsEnvelope,
  type CardBlock,
  type Csat,
  type ErrorBlock,
  type InboxConversationView,
  type InboxPublication,
  type MarkdownBlock,
  type MessageRole,
  type MessageSnapshot,
  type PlatformConversationView,
  type PostbackBlock,
  type QuickRepliesBlock,
  RASTER_IMAGE_TYPES,
  type ReceivedBlock,
  type ReceivedSnapshot,
  readEnvelope,
  type SourcesBlock,
  type TypingBlock,
} from '@parley/webchat-protocol';
import { renderMarkdown } from '@parley/widget/markdown';
import { Centrifuge, type Subscription } from 'centrifuge';
import { ApiError, api, type SessionInfo, upload } from '../api.ts';
import { createForm } from '../components/form.ts';
import { statusArea } from '../components/page-parts.ts';
import { formatTime, h, replaceChildren } from '../dom.ts';
import { InboxAlerts } from './inbox/alerts.ts';
import { attachCannedMenu } from './inbox/canned-menu.ts';
import { routingPanel } from './inbox/routing-panel.ts';
import { VisitorTypingMarks } from './inbox/visitor-typing.ts';

/**
 * The inbox reads the platform view of a conversation and the server's own snapshots (one deployment, one version),
 * with what agents have not read yet and the visitor's CSAT.
 */
type ConversationView = PlatformConversationView & {
  unread_count?: number;
  csat?: Csat | null;
  last_message?: InboxConversationView['last_message'];
};

/** Who the visitor is: a verified visitor's name (or email, or id), else an anonymous session. */
function visitorLabel(c: ConversationView): string {
  const v = c.visitor;
  if (!v) return 'Anonymous visitor';
  return v.name ?? v.email ?? v.id;
}

/** Who handles it, as the list badge says: closed, queued, the agent's name, or the digital employee. */
function handlerLabel(c: ConversationView): { text: string; kind: string } {
  if (c.status === 'closed') return { text: 'closed', kind: 'closed' };
  if (c.queued_at) return { text: 'queued', kind: 'queued' };
  if (c.handled_by === 'agent') return { text: c.agent_name ?? 'agent', kind: 'agent' };
  return { text: 'bot', kind: 'digital_employee' };
}

interface RealtimeGrant {
  websocket_url: string;
  connection_token: string;
  subscription_token: string;
  channel: string;
}

/**
 * A subscription to the channel a grant names, on the page's one client; when its token expires a fresh grant
 * renews it (the inbox channel and a transcript's channel alike).
 */
const subscribeGranted = (
  client: Centrifuge,
  g: RealtimeGrant,
  grant: () => Promise<RealtimeGrant>,
): Subscription =>
  client.newSubscription(g.channel, {
    token: g.subscription_token,
    getToken: async () => (await grant()).subscription_token,
  });

const ROLE_LABEL: Record<MessageRole, string> = {
  user: 'Visitor',
  digital_employee: 'Digital employee',
  agent: 'Agent',
  system: 'System',
  note: 'Internal note',
};

/**
 * The agent inbox: the company's conversations kept live by its inbox channel (no polling; docs/routing.md "Live
 * inbox"), a queue view with take, search, availability, notifications for a visitor waiting or a new message in
 * a conversation assigned to me; the selected transcript kept live over its conversation channel (replace →
 * complete envelopes, older sequences dropped as the protocol says), rendered with the widget's safe markdown; and
 * the agent actions: take over, take, reply (with `/` canned responses), hand back, close.
 */
export async function renderInbox(main: HTMLElement): Promise<void> {
  const session = await api<SessionInfo>('GET', '/session');
  const me = session.user;
  const statusFilter = h(
    'select',
    { id: 'inbox-status' },
    h('option', { value: 'open' }, 'Open'),
    h('option', { value: 'queue' }, 'Queue'),
    h('option', { value: 'closed' }, 'Closed'),
    h('option', { value: '' }, 'All'),
  );
  const search = h('input', {
    type: 'search',
    id: 'inbox-search',
    placeholder: 'Visitor, email or words in messages',
  });
  const list = h('ul', { class: 'conversation-list', 'aria-label': 'Conversations' });
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load more');
  const pane = h(
    'section',
    { class: 'transcript-pane', 'aria-label': 'Conversation' },
    h('p', { class: 'muted' }, 'Choose a conversation.'),
  );
  const alerts = new InboxAlerts();
  const routing = routingPanel(me);
  let selected: string | undefined;
  let cursor: string | null = null;
  /** The selected conversation's subscription, on the page's one realtime client (the inbox's). */
  let live: { sub: Subscription } | undefined;
  let inboxClient: Centrifuge | undefined;
  let clientReady!: (client: Centrifuge | Error) => void;
  const client = new Promise<Centrifuge | Error>((resolve) => {
    clientReady = resolve;
  });
  /** What the pane on screen says when the page's connection is lost or refused. */
  let onConnectionTrouble: ((why: string) => void) | undefined;
  /** Why the page's connection is down now (a pane opened meanwhile says so at once); undefined while connected. */
  let connectionTrouble: string | undefined;
  const trouble = (why: string) => {
    connectionTrouble = why;
    onConnectionTrouble?.(why);
  };
  /** What the list last knew of each conversation (to tell what an event changed). */
  const known = new Map<string, ConversationView>();
  /** The selected conversation's pane, told when its entry changes. */
  let onSelectedChanged: ((c: ConversationView) => void) | undefined;
  /** The selected conversation's pane, told when its visitor starts or stops typing. */
  let onSelectedTyping: ((typing: boolean) => void) | undefined;
  const typing = new VisitorTypingMarks((id, now) => {
    list.querySelector(`button.conversation[data-id="${id}"] .typing-note`)?.toggleAttribute('hidden', !now);
    if (id === selected) onSelectedTyping?.(now);
  });

  const stopLive = () => {
    if (live) {
      live.sub.removeAllListeners();
      live.sub.unsubscribe();
      inboxClient?.removeSubscription(live.sub);
    }
    live = undefined;
    onConnectionTrouble = undefined;
    // Tests (and anyone watching the pane) wait for this to know the transcript on screen is streaming.
    pane.removeAttribute('data-live');
  };

  const entryElement = (c: ConversationView) => {
    const handler = handlerLabel(c);
    const queued = statusFilter.value === 'queue';
    return h(
      'li',
      { 'data-id': c.id },
      h(
        'button',
        {
          type: 'button',
          class: 'conversation',
          'aria-current': c.id === selected ? 'true' : null,
          'data-id': c.id,
          onclick: () => void open(c.id),
        },
        h(
          'span',
          { class: 'conv-head' },
          h('span', { class: c.visitor ? 'visitor' : 'visitor muted' }, visitorLabel(c)),
          c.unread_count
            ? h(
                'span',
                { class: 'badge unread', 'aria-label': `${c.unread_count} unread` },
                String(c.unread_count),
              )
            : null,
          h('span', { class: `badge handler ${handler.kind}` }, handler.text),
        ),
        h('span', { class: 'preview' }, c.last_message ? c.last_message.text : 'No messages yet.'),
        h('span', { class: 'typing-note', hidden: !typing.isTyping(c.id) }, 'Visitor is typing…'),
        h(
          'span',
          { class: 'muted when' },
          queued && c.queued_at ? `waiting since ${formatTime(c.queued_at)}` : formatTime(c.updated_at),
        ),
        'match' in c && (c as { match: { excerpt: string } | null }).match
          ? h('span', { class: 'match' }, (c as { match: { excerpt: string } }).match.excerpt)
          : null,
      ),
      queued ? h('button', { type: 'button', class: 'take', onclick: () => void take(c.id) }, 'Take') : null,
    );
  };

  /** Whether an entry belongs in the list as filtered now (search results are not followed live). */
  const belongs = (c: ConversationView) => {
    if (search.value.trim()) return false;
    if (statusFilter.value === 'queue') return c.status === 'open' && Boolean(c.queued_at) && !c.assignee_id;
    return !statusFilter.value || c.status === statusFilter.value;
  };

  const showEmpty = () => {
    if (!list.querySelector('li[data-id]'))
      replaceChildren(list, h('li', { class: 'muted' }, 'No conversations.'));
  };

  /** A pushed entry: replaced in place and moved to the top, or removed when it no longer belongs. */
  const upsert = (c: ConversationView) => {
    const old = list.querySelector(`li[data-id="${c.id}"]`);
    if (!belongs(c)) {
      if (old && !search.value.trim()) old.remove();
      showEmpty();
      return;
    }
    list.querySelector('li.muted')?.remove();
    old?.remove();
    if (statusFilter.value === 'queue') list.append(entryElement(c));
    else list.prepend(entryElement(c));
  };

  const take = async (id: string) => {
    await api('POST', `/inbox/conversations/${id}/take`);
    await open(id);
  };

  const loadList = async (append = false) => {
    const q = search.value.trim();
    const params = new URLSearchParams({ limit: '20' });
    if (q) params.set('q', q);
    else if (statusFilter.value && statusFilter.value !== 'queue') params.set('status', statusFilter.value);
    if (append && cursor) params.set('cursor', cursor);
    const path = q
      ? `/inbox/search?${params}`
      : statusFilter.value === 'queue'
        ? '/inbox/queue'
        : `/inbox/conversations?${params}`;
    try {
      const page = await api<{ items: ConversationView[]; next_cursor?: string | null }>('GET', path);
      cursor = page.next_cursor ?? null;
      more.hidden = !cursor;
      for (const c of page.items) known.set(c.id, c);
      const items = page.items.map(entryElement);
      if (append) list.append(...items);
      else
        replaceChildren(
          list,
          ...(items.length
            ? items
            : [h('li', { class: 'muted' }, q ? 'Nothing found.' : 'No conversations.')]),
        );
    } catch (err) {
      replaceChildren(
        list,
        h(
          'li',
          { class: 'form-error', role: 'alert' },
          err instanceof ApiError ? err.detail : 'Could not load conversations.',
        ),
      );
    }
  };

  /** A visitor waiting, a conversation given to me, or a new visitor message in one of mine: tell the agent. */
  const alertFor = (before: ConversationView | undefined, c: ConversationView) => {
    const label = visitorLabel(c);
    const openIt = () => void open(c.id);
    if (c.queued_at && !c.assignee_id && !before?.queued_at)
      alerts.notify(
        'A visitor is waiting',
        `${label}: ${c.last_message?.text ?? ''}`,
        `queue-${c.id}`,
        openIt,
      );
    else if (c.assignee_id === me.id && before?.assignee_id !== me.id)
      alerts.notify('Conversation assigned to you', label, `assigned-${c.id}`, openIt);
    else if (
      c.assignee_id === me.id &&
      c.last_message?.role === 'user' &&
      c.last_message.created_at !== before?.last_message?.created_at &&
      !(c.id === selected && document.visibilityState === 'visible')
    )
      alerts.notify(`New message from ${label}`, c.last_message.text, `message-${c.id}`, openIt);
  };

  /** The company's inbox channel: every change of a conversation arrives as its new entry. */
  const followInbox = async () => {
    const grant = () => api<RealtimeGrant>('POST', '/inbox/realtime');
    const g = await grant().catch((err: unknown) => {
      clientReady(err instanceof Error ? err : new Error('request failed'));
      throw err;
    });
    const client = new Centrifuge(g.websocket_url, {
      token: g.connection_token,
      getToken: async () => (await grant()).connection_token,
    });
    const sub = subscribeGranted(client, g, grant);
    sub.on('publication', (ctx) => {
      // The page was left: this client follows nothing anyone sees.
      if (!main.isConnected) return client.disconnect();
      const event = ctx.data as InboxPublication;
      if (event?.version !== 1) return;
      if ('event' in event) {
        if (event.event === 'visitor_typing') typing.mark(event.conversation_id);
        return;
      }
      if (event.type !== 'conversation') return;
      const c = event.conversation as ConversationView;
      const before = known.get(c.id);
      known.set(c.id, c);
      // The visitor's message is what they were typing: the indicator goes with it.
      if (c.last_message?.role === 'user' && c.last_message.created_at !== before?.last_message?.created_at)
        typing.clear(c.id);
      alertFor(before, c);
      upsert(c);
      if (c.id === selected) onSelectedChanged?.(c);
      if (before?.assignee_id !== c.assignee_id) void routing.refresh();
    });
    sub.on('subscribed', () => main.setAttribute('data-inbox-live', 'true'));
    sub.on('unsubscribed', () => main.removeAttribute('data-inbox-live'));
    // Code 0 is the client's own doing (first connect); any other code is the server's (3000–4999, e.g. 4503 origin
    // refused) or the network's (1 transport closed).
    client.on('connecting', ({ code, reason }) => {
      main.removeAttribute('data-inbox-live');
      if (code !== 0) trouble(`the connection was lost (${code} ${reason}); reconnecting…`);
    });
    client.on('connected', () => {
      connectionTrouble = undefined;
    });
    client.on('disconnected', ({ code, reason }) => {
      main.removeAttribute('data-inbox-live');
      if (code !== 0)
        trouble(`the connection was refused (${code} ${reason}). Reload the page to try again.`);
    });
    client.connect();
    sub.subscribe();
    inboxClient = client;
    clientReady(client);
  };

  const open = async (id: string) => {
    selected = id;
    stopLive();
    alerts.clear();
    for (const b of list.querySelectorAll('button.conversation')) {
      if ((b as HTMLElement).dataset.id === id) b.setAttribute('aria-current', 'true');
      else b.removeAttribute('aria-current');
    }
    try {
      const detail = await api<{ conversation: ConversationView; messages: MessageSnapshot[] }>(
        'GET',
        `/inbox/conversations/${id}`,
      );
      // Another conversation was chosen while this one loaded: showing it now would put the wrong one on screen.
      if (selected !== id) return;
      renderConversation(detail.conversation, detail.messages);
      void markRead(id);
    } catch (err) {
      if (selected !== id) return;
      // The pane must not keep showing the previous conversation (no longer live) as if it were this one.
      const status = statusArea();
      status.say('error', err instanceof Error ? err.message : 'Could not load the conversation.');
      replaceChildren(pane, status.el);
    }
  };

  /** What the agent has on screen counts as read: the visitor sees "Seen", and the list's unread count drops. */
  const markRead = async (id: string) => {
    if (document.visibilityState === 'hidden') return;
    try {
      await api('POST', `/inbox/conversations/${id}/read`, {});
      const badge = list.querySelector(`button.conversation[data-id="${id}"] .unread`);
      badge?.remove();
    } catch {
      // Not read now; the next message or the next opening marks it.
    }
  };

  const renderConversation = (conversation: ConversationView, messages: MessageSnapshot[]) => {
    const transcript = h('ol', { class: 'transcript', 'aria-live': 'polite', 'aria-label': 'Transcript' });
    const elements = new Map<string, HTMLElement>();
    const sequences = new Map<string, number>();
    const showMessage = (m: ReceivedSnapshot) => {
      const el = messageElement(m);
      const old = elements.get(m.id);
      if (old) old.replaceWith(el);
      else transcript.append(el);
      elements.set(m.id, el);
      el.scrollIntoView({ block: 'nearest' });
    };
    for (const m of messages) showMessage(m);

    const typingNote = h(
      'p',
      { class: 'typing-note', role: 'status', hidden: !typing.isTyping(conversation.id) },
      'Visitor is typing…',
    );
    onSelectedTyping = (now) => {
      if (transcript.isConnected) typingNote.hidden = !now;
    };
    const state = h('p', { class: 'conv-state' });
    const actions = h('div', { class: 'actions' });
    const feedback = statusArea();
    const setState = (c: ConversationView) => {
      conversation = c;
      state.textContent =
        c.status === 'closed'
          ? 'Closed.'
          : c.handled_by === 'agent'
            ? `Handled by an agent${c.agent_name ? ` (${c.agent_name})` : ''}.`
            : c.queued_at
              ? `Waiting for an agent since ${formatTime(c.queued_at)}; the digital employee answers meanwhile.`
              : 'Handled by the digital employee.';
      const act = (label: string, path: string) =>
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            onclick: async () => {
              try {
                setState(await api<ConversationView>('POST', `/inbox/conversations/${c.id}/${path}`));
                void loadList();
              } catch (err) {
                feedback.say('error', err instanceof Error ? err.message : 'Failed.');
              }
            },
          },
          label,
        );
      replaceChildren(
        actions,
        c.status === 'closed' ? null : c.assignee_id !== me.id ? act('Take', 'take') : null,
        c.status === 'closed'
          ? null
          : c.handled_by === 'agent'
            ? act('Hand back', 'handback')
            : act('Take over', 'handover'),
        c.status === 'closed' ? null : act('Close', 'close'),
      );
    };
    setState(conversation);
    onSelectedChanged = (c) => setState({ ...conversation, ...c });
    const refreshState = async () =>
      setState(
        (await api<{ conversation: ConversationView }>('GET', `/inbox/conversations/${conversation.id}`))
          .conversation,
      );

    // Says why the transcript is not live (it would otherwise look live and silently miss messages).
    const liveNotice = h('p', { class: 'notice warning live-notice', role: 'status', hidden: true });

    // Files to send with the reply: uploaded first (the server checks type and size), then named in the post.
    const files = h('input', {
      type: 'file',
      multiple: true,
      'aria-label': 'Attach files',
      class: 'reply-files',
    });
    const reply = createForm({
      submitLabel: 'Send reply',
      resetOnSuccess: true,
      fields: [
        {
          name: 'content',
          label: 'Reply as agent',
          type: 'textarea',
          maxLength: 16384,
          hint: 'Sending takes the conversation over from the digital employee. A reply may be only attached files.',
          // Required unless files are attached.
          validate: (value) =>
            String(value).trim() === '' && (files.files?.length ?? 0) === 0
              ? 'This field is required.'
              : undefined,
        },
        {
          name: 'quick_replies',
          label: 'Quick replies (optional)',
          type: 'textarea',
          maxLength: 1200,
          hint: 'One per line, up to 10: the visitor sees them as buttons under your reply and can tap one.',
        },
      ],
      onSubmit: async (values) => {
        const quickReplies = String(values.quick_replies ?? '')
          .split('\n')
          .map((line) => line.trim())
          .filter((line) => line.length > 0);
        const uploaded: Array<{ id: string }> = [];
        for (const file of files.files ?? []) {
          uploaded.push(
            await upload<{ id: string }>(`/inbox/conversations/${conversation.id}/attachments`, file),
          );
        }
        const sent = await api<MessageSnapshot>('POST', `/inbox/conversations/${conversation.id}/messages`, {
          content: values.content ?? '',
          attachment_ids: uploaded.map((a) => a.id),
          ...(quickReplies.length > 0 ? { quick_replies: quickReplies } : {}),
        });
        files.value = '';
        showMessage(sent);
        await refreshState();
        void loadList();
      },
    });

    replaceChildren(
      pane,
      h('h2', {}, `Conversation #${conversation.id.slice(0, 8)}`),
      h(
        'p',
        { class: 'muted' },
        `Started ${formatTime(conversation.created_at)} · visitor session ${conversation.session_id.slice(0, 8)}`,
      ),
      visitorDetails(conversation),
      csatDetails(conversation),
      state,
      actions,
      feedback.el,
      liveNotice,
      transcript,
      typingNote,
      conversation.status === 'closed' ? null : reply.el,
    );
    // `/` in the reply box opens the canned responses.
    const box = reply.el.querySelector('textarea');
    if (box) box.after(attachCannedMenu(box));
    // The file picker sits in the reply form, just above its submit button.
    reply.el
      .querySelector('button[type="submit"]')
      ?.before(h('label', { class: 'reply-files-label' }, 'Attach files ', files));

    // Live: the realtime engine pushes every envelope of this conversation; stale sequences are dropped.
    const grant = () => api<RealtimeGrant>('POST', `/inbox/conversations/${conversation.id}/realtime`);
    const liveOff = (why: string) => {
      if (!transcript.isConnected) return;
      liveNotice.textContent = `Live updates are off: ${why}`;
      liveNotice.hidden = false;
      pane.removeAttribute('data-live');
    };
    void Promise.all([grant(), client]).then(
      ([g, c]) => {
        if (c instanceof Error) return liveOff(`no live access (${c.message}).`);
        // Only the transcript on screen goes live: a transcript a later render replaced (another conversation, or
        // this one opened again) would get a subscription that streams into nothing and is never stopped.
        if (!transcript.isConnected) return;
        stopLive();
        const old = c.getSubscription(g.channel);
        old?.unsubscribe();
        if (old) c.removeSubscription(old);
        const sub = subscribeGranted(c, g, grant);
        const current = () => live?.sub === sub;
        onConnectionTrouble = liveOff;
        sub.on('unsubscribed', ({ code, reason }) => {
          if (code !== 0 && current())
            liveOff(`the subscription ended (${code} ${reason}). Reload the page to try again.`);
        });
        sub.on('publication', (ctx) => {
          const { envelope } = readEnvelope(ctx.data);
          if (!envelope) return;
          const id = envelope.message_snapshot.id;
          // Sequences start at 1; a message first seen here counts as seen at 0 (what the transcript was loaded with).
          if (!acceptsEnvelope(sequences.get(id) ?? 0, envelope)) return;
          sequences.set(id, envelope.sequence);
          showMessage(envelope.message_snapshot);
          if (envelope.message_snapshot.role === 'system' && envelope.operation === 'complete')
            void refreshState();
          if (envelope.message_snapshot.role === 'user') {
            typing.clear(conversation.id);
            void markRead(conversation.id);
          }
        });
        // Guarded: a subscription stopped meanwhile (another conversation opened) must not mark that one live.
        sub.on('subscribed', () => {
          if (!current()) return;
          liveNotice.hidden = true;
          pane.setAttribute('data-live', 'true');
        });
        sub.subscribe();
        live = { sub };
        if (connectionTrouble) liveOff(connectionTrouble);
      },
      (err) => liveOff(`no live access (${err instanceof Error ? err.message : 'request failed'}).`),
    );
  };

  statusFilter.addEventListener('change', () => void loadList());
  more.addEventListener('click', () => void loadList(true));
  let searchTimer: ReturnType<typeof setTimeout> | undefined;
  search.addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => void loadList(), 250);
  });
  // The conversation's own realtime client stops when the page is left (the router replaces `main`).
  const leaving = new MutationObserver(() => {
    if (main.isConnected) return;
    stopLive();
    inboxClient?.disconnect();
    alerts.clear();
    leaving.disconnect();
  });
  leaving.observe(document.body, { childList: true });

  main.append(
    h('h1', {}, 'Inbox'),
    h('div', { class: 'inbox-bar' }, routing.el, alerts.controls),
    h(
      'div',
      { class: 'inbox' },
      h(
        'section',
        { class: 'inbox-list', 'aria-label': 'Conversation list' },
        h('div', { class: 'field' }, h('label', { for: 'inbox-search' }, 'Search'), search),
        h('div', { class: 'field' }, h('label', { for: 'inbox-status' }, 'Show'), statusFilter),
        list,
        more,
      ),
      pane,
    ),
  );
  // Without live access the list still loads; open transcripts say why they are not live.
  await Promise.all([loadList(), routing.refresh(), followInbox().catch(() => undefined)]);
}

/** The verified visitor's id, name and email, or that the visitor is anonymous. */
function visitorDetails(c: ConversationView): HTMLElement {
  const v = c.visitor;
  if (!v) return h('p', { class: 'visitor-details muted' }, 'Anonymous visitor (not verified).');
  return h(
    'dl',
    { class: 'pairs visitor-details', 'aria-label': 'Visitor' },
    h('dt', {}, 'Visitor'),
    h('dd', {}, v.name ?? '—'),
    h('dt', {}, 'Email'),
    h('dd', {}, v.email ? h('a', { href: `mailto:${v.email}` }, v.email) : '—'),
    h('dt', {}, 'User id'),
    h('dd', {}, h('code', {}, v.id)),
  );
}

/** The visitor's rating of a closed conversation. */
function csatDetails(c: ConversationView): HTMLElement | null {
  if (c.status !== 'closed') return null;
  if (!c.csat) return h('p', { class: 'csat muted' }, 'No satisfaction rating yet.');
  return h(
    'p',
    { class: 'csat' },
    `Satisfaction: ${c.csat.score}/5`,
    c.csat.comment ? ` — “${c.csat.comment}”` : '',
  );
}

function messageElement(m: ReceivedSnapshot): HTMLElement {
  // Markdown through the widget's renderer (one renderer, never an HTML parser); error blocks carry their
  // visitor-safe text in `message` and show as plain text.
  const markdown = m.blocks
    .filter((b) => b.type === 'markdown')
    .map((b) => (b as MarkdownBlock).content ?? '')
    .join('\n\n');
  const errors = m.blocks
    .filter((b) => b.type === 'error')
    .map((b) => (b as ErrorBlock).message ?? '')
    .join('\n');
  const interactive = m.blocks.flatMap((b) => interactiveElement(b));
  const typing = m.blocks.some((b) => b.type === 'typing' && (b as TypingBlock).typing);
  return h(
    'li',
    { class: `message ${m.role}`, 'data-status': m.status, 'data-id': m.id },
    h(
      'span',
      { class: 'who' },
      m.author?.name ? `${m.author.name} (${ROLE_LABEL[m.role]})` : ROLE_LABEL[m.role],
    ),
    h(
      'div',
      { class: 'text' },
      markdown ? renderMarkdown(document, markdown) : null,
      errors || (!markdown && typing ? 'typing…' : ''),
    ),
    attachmentsElement(m),
    ...interactive,
    m.status === 'partial' ? h('span', { class: 'muted streaming' }, ' (streaming)') : null,
    m.feedback
      ? h(
          'span',
          { class: `rating ${m.feedback.rating}` },
          m.feedback.rating === 'up' ? 'Visitor found this helpful' : 'Visitor found this not helpful',
          m.feedback.comment ? `: “${m.feedback.comment}”` : '',
        )
      : null,
  );
}

/**
 * Quick replies, cards and postbacks in a transcript (docs/design.md "Interactive blocks"), as text: what was
 * offered, and which choice the visitor tapped.
 */
function interactiveElement(b: ReceivedBlock): HTMLElement[] {
  if (b.type === 'sources') return sourcesElement(b as SourcesBlock);
  if (b.type === 'postback') {
    const { label, option_id } = b as PostbackBlock;
    return [h('span', { class: 'postback', title: `option ${option_id}` }, `Chose: ${label}`)];
  }
  if (b.type === 'quick_replies') {
    const labels = (b as QuickRepliesBlock).options.map((o) => o.label);
    return [h('span', { class: 'offer quick-replies' }, `Quick replies: ${labels.join(' · ')}`)];
  }
  if (b.type === 'card') {
    const card = b as CardBlock;
    const buttons = card.buttons.map((x) => (x.url ? `${x.label} ↗ ${x.url}` : x.label));
    return [
      h(
        'span',
        { class: 'offer card' },
        `Card: ${card.title}`,
        card.text ? ` — ${card.text}` : '',
        buttons.length > 0 ? ` [${buttons.join(' · ')}]` : '',
      ),
    ];
  }
  return [];
}

/**
 * What a digital employee's answer was based on (docs/knowledge.md "Citations"): each source's title, a link when its
 * URL is http(s) (new tab, no referrer, no opener), so the agent can check the answer against it.
 */
function sourcesElement(block: SourcesBlock): HTMLElement[] {
  if (!Array.isArray(block.sources) || block.sources.length === 0) return [];
  const items = block.sources.map((source) => {
    const url = typeof source.url === 'string' && /^https?:\/\//i.test(source.url) ? source.url : null;
    const title = String(source.title ?? '');
    return h(
      'li',
      {},
      url ? h('a', { href: url, target: '_blank', rel: 'noopener noreferrer' }, title) : title,
      source.snippet ? h('span', { class: 'muted' }, ` — ${source.snippet}`) : null,
    );
  });
  return [h('span', { class: 'sources' }, 'Sources:', h('ol', {}, ...items))];
}

/**
 * A message's attachments (docs/design.md "Attachments"): raster images as thumbnails, other files as chips, each
 * linking to its signed `url` (fresh in every read and envelope; it needs no headers).
 */
function attachmentsElement(m: ReceivedSnapshot): HTMLElement | null {
  const attachments = m.blocks.filter((b) => b.type === 'attachment') as unknown as AttachmentBlock[];
  if (attachments.length === 0) return null;
  return h(
    'span',
    { class: 'attachments' },
    ...attachments.map((a) =>
      RASTER_IMAGE_TYPES.has(a.content_type)
        ? h(
            'a',
            { href: a.url, target: '_blank', rel: 'noopener noreferrer', class: 'attachment-thumb' },
            h('img', { src: a.url, alt: a.name, class: 'thumbnail' }),
          )
        : h(
            'a',
            {
              href: a.url,
              target: '_blank',
              rel: 'noopener noreferrer',
              download: a.name,
              class: 'attachment-chip',
            },
            `📎 ${a.name} (${Math.max(1, Math.round(a.size / 1024))} KB)`,
          ),
    ),
  );
}
