import type { PlatformConversationView } from '@parley/webchat-protocol';
import type { ConversationLabelsView, WorkspaceStatusView } from '@parley/wire-types';
import { api } from '../../api.ts';
import { formatTime, h, replaceChildren } from '../../dom.ts';
import { type ConversationView, snoozeChoices } from './model.ts';

export interface ActionsOptions {
  me: string;
  /** Whether the server has the workspace statuses and labels (else only take over / hand back / resolve). */
  workspace: boolean;
  /** A changed conversation (what the action answered), or an error to show. */
  changed(c: ConversationView): void;
  failed(err: unknown): void;
}

/** What an action answered: the conversation, or only the fields it changed (status, labels). */
type Change = Partial<ConversationView>;

/** What the conversation's state line says. */
export function stateText(c: ConversationView): string {
  if (c.status === 'closed' || c.status === 'resolved') return 'Resolved.';
  if (c.status === 'snoozed') return `Snoozed until ${formatTime(c.snoozed_until)}.`;
  const pending = c.status === 'pending' ? ' Waiting on the visitor.' : '';
  if (c.handled_by === 'agent') {
    const who = c.assignee?.name ?? c.agent_name;
    return `Handled by an agent${who ? ` (${who})` : ''}.${pending}`;
  }
  if (c.queued_at)
    return `Waiting for an agent since ${formatTime(c.queued_at)}; the digital employee answers meanwhile.`;
  return `Handled by the digital employee.${pending}`;
}

/**
 * The one ownership action (never two side by side): "Take over" while the digital employee answers (takes it over
 * and assigns it to me), "Assign to me" when an agent handles it for someone else or nobody, and "Hand back" once it
 * is mine. Each answers the conversation's new state.
 */
export function ownershipAction(
  c: ConversationView,
  me: string,
): { label: string; run: () => Promise<Change> } | undefined {
  if (c.status === 'closed' || c.status === 'resolved') return undefined;
  const post = (path: string) =>
    api<PlatformConversationView>('POST', `/inbox/conversations/${c.id}/${path}`);
  // Assigning may be refused (the agent is away or at capacity): taking over still goes ahead.
  const assign = async () => (c.assignee_id === me ? c : await post('take').catch(() => c));
  if (c.handled_by !== 'agent')
    return { label: 'Take over', run: async () => ({ ...(await assign()), ...(await post('handover')) }) };
  if (c.assignee_id !== me) return { label: 'Assign to me', run: () => post('take') };
  return { label: 'Hand back', run: () => post('handback') };
}

/** Resolve (the stable `POST …/close`), or reopen a resolved conversation when the server has statuses. */
export function resolveAction(
  c: ConversationView,
  workspace: boolean,
): { label: string; run: () => Promise<Change> } | undefined {
  const resolved = c.status === 'closed' || c.status === 'resolved';
  if (!resolved)
    return {
      label: 'Resolve',
      run: () => api<PlatformConversationView>('POST', `/inbox/conversations/${c.id}/close`),
    };
  if (!workspace) return undefined;
  return { label: 'Reopen', run: () => setStatus(c.id, 'open') };
}

const setStatus = (id: string, status: string, snoozedUntil?: string) =>
  api<WorkspaceStatusView>('PUT', `/inbox/conversations/${id}/status`, {
    status,
    ...(snoozedUntil ? { snoozed_until: snoozedUntil } : {}),
  });

/** The action bar: ownership, resolve, and with the workspace API status (open / pending), snooze and labels. */
export function actionBar(c: ConversationView, o: ActionsOptions): HTMLElement {
  const run = (f: () => Promise<Change>) => async () => {
    try {
      o.changed({ ...c, ...(await f()) });
    } catch (err) {
      o.failed(err);
    }
  };
  const button = (a: { label: string; run: () => Promise<Change> } | undefined, cls: string) =>
    a
      ? h('button', { type: 'button', class: cls, 'data-action': a.label, onclick: run(a.run) }, a.label)
      : null;
  const open = c.status !== 'closed' && c.status !== 'resolved';
  return h(
    'div',
    { class: 'actions' },
    button(ownershipAction(c, o.me), 'primary'),
    button(resolveAction(c, o.workspace), 'secondary'),
    o.workspace && open ? statusControl(c, run) : null,
    o.workspace && open ? snoozeControl(c, run) : null,
  );
}

type Runner = (f: () => Promise<Change>) => () => Promise<void>;

function statusControl(c: ConversationView, run: Runner): HTMLElement {
  const select = h(
    'select',
    { 'aria-label': 'Status' },
    ...['open', 'pending', 'snoozed'].map((s) =>
      h(
        'option',
        { value: s, selected: c.status === s, disabled: s === 'snoozed' },
        s[0]!.toUpperCase() + s.slice(1),
      ),
    ),
  );
  select.addEventListener('change', () => void run(() => setStatus(c.id, select.value))());
  return select;
}

/** Snooze: a disclosure with the choices (in an hour, tomorrow, Monday), each a button. */
function snoozeControl(c: ConversationView, run: Runner): HTMLElement {
  const menu = h('div', { class: 'snooze-menu', id: `snooze-${c.id}`, hidden: true });
  const toggle = h(
    'button',
    { type: 'button', class: 'secondary', 'aria-expanded': 'false', 'aria-controls': menu.id },
    'Snooze',
  );
  toggle.addEventListener('click', () => {
    menu.hidden = !menu.hidden;
    toggle.setAttribute('aria-expanded', String(!menu.hidden));
  });
  replaceChildren(
    menu,
    ...snoozeChoices(new Date()).map((choice) =>
      h(
        'button',
        {
          type: 'button',
          class: 'secondary small',
          onclick: run(() => setStatus(c.id, 'snoozed', choice.until.toISOString())),
        },
        choice.label,
      ),
    ),
  );
  return h('span', { class: 'snooze' }, toggle, menu);
}

/** The labels of a conversation as removable chips and a field to add one (the company's labels suggested). */
export function labelsEditor(c: ConversationView, known: string[], o: ActionsOptions): HTMLElement {
  const labels = [...(c.labels ?? [])];
  const save = async (next: string[]) => {
    try {
      const answer = await api<ConversationLabelsView>('PUT', `/inbox/conversations/${c.id}/labels`, {
        labels: next,
      });
      o.changed({ ...c, labels: answer.labels });
    } catch (err) {
      o.failed(err);
    }
  };
  const listId = `labels-known-${c.id}`;
  const input = h('input', {
    type: 'text',
    list: listId,
    'aria-label': 'Add a label',
    placeholder: 'Add label…',
    maxlength: 64,
  });
  input.addEventListener('keydown', (event) => {
    const value = input.value.trim();
    if (event.key !== 'Enter' || !value) return;
    event.preventDefault();
    if (!labels.includes(value)) void save([...labels, value]);
  });
  return h(
    'div',
    { class: 'labels-editor', role: 'group', 'aria-label': 'Labels' },
    ...labels.map((l) =>
      h(
        'span',
        { class: 'chip label' },
        l,
        h(
          'button',
          {
            type: 'button',
            class: 'chip-remove',
            'aria-label': `Remove label ${l}`,
            onclick: () => void save(labels.filter((x) => x !== l)),
          },
          '×',
        ),
      ),
    ),
    input,
    h('datalist', { id: listId }, ...known.map((k) => h('option', { value: k }))),
  );
}
