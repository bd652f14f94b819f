import type { Csat, InboxConversationView, PlatformConversationView } from '@parley/webchat-protocol';
import type { CompanyLabelsView } from '@parley/wire-types';

/**
 * What the inbox reads of a conversation: the platform view and the inbox's own fields (unread count, CSAT, last
 * message), plus the agent-workspace fields of docs/design.md "Agent workspace" when the server sends them
 * (status open / pending / snoozed / resolved, snooze time, labels, assignee). Every new field is optional: the UI
 * works with a server that does not send them yet and shows the controls only when they are there.
 */
export type ConversationView = Omit<PlatformConversationView, 'status'> & {
  status: string;
  unread_count?: number;
  unread?: number | boolean;
  csat?: Csat | null;
  last_message?: InboxConversationView['last_message'];
  snoozed_until?: string | null;
  labels?: string[];
  assignee?: { id: string; name: string | null } | null;
};

/** The list's views: the agent's own, nobody's, waiting in the queue, everything. */
export const VIEWS = ['mine', 'unassigned', 'queued', 'all'] as const;
export type InboxView = (typeof VIEWS)[number];
export const VIEW_LABEL: Record<InboxView, string> = {
  mine: 'Mine',
  unassigned: 'Unassigned',
  queued: 'Queued',
  all: 'All',
};

/** The workspace statuses (DESIGN "Agent workspace"); a server without them knows open and closed only. */
export const STATUSES = ['open', 'pending', 'snoozed', 'resolved'] as const;

export interface ListFilter {
  view: InboxView;
  /** '' = any status. */
  status: string;
  /** '' = any label. */
  label: string;
  /** Free text: the search route instead of the list. */
  q: string;
}

/** The visitor as the list and headers name them: a verified visitor's name (or email, or id), else anonymous. */
export function visitorLabel(c: ConversationView): string {
  const v = c.visitor;
  if (!v) return 'Anonymous visitor';
  return v.name ?? v.email ?? v.id;
}

/** Two letters for an avatar: the initials of a name, or of an email's local part. */
export function initialsOf(name: string | null | undefined): string {
  const words = (name ?? '')
    .replace(/@.*$/, '')
    .split(/[\s._-]+/)
    .filter(Boolean);
  if (words.length === 0) return '?';
  const letters = words.length === 1 ? words[0]!.slice(0, 2) : words[0]![0]! + words[words.length - 1]![0]!;
  return letters.toUpperCase();
}

/** How many messages the agents have not read (the old `unread_count` or the new `unread`). */
export function unreadOf(c: ConversationView): number {
  if (typeof c.unread === 'number') return c.unread;
  if (c.unread === true) return Math.max(1, c.unread_count ?? 1);
  if (c.unread === false) return 0;
  return c.unread_count ?? 0;
}

/** Whether the server speaks the workspace statuses (any status beyond open / closed seen, or labels sent). */
export function hasWorkspaceFields(c: ConversationView): boolean {
  return 'labels' in c || 'snoozed_until' in c || 'assignee' in c;
}

/** Who handles it, as the list badge says: closed, snoozed, queued, the agent's name, or the digital employee. */
export function handlerLabel(c: ConversationView): { text: string; kind: string } {
  if (c.status === 'closed' || c.status === 'resolved') return { text: 'resolved', kind: 'closed' };
  if (c.queued_at && !c.assignee_id) return { text: 'queued', kind: 'queued' };
  if (c.handled_by === 'agent') return { text: c.assignee?.name ?? c.agent_name ?? 'agent', kind: 'agent' };
  return { text: 'bot', kind: 'digital_employee' };
}

/** The query of the list route for a filter (the old server ignores nothing: it only gets what it knows). */
export function listQuery(filter: ListFilter, workspace: boolean, cursor?: string | null): URLSearchParams {
  const params = new URLSearchParams({ limit: '25' });
  if (filter.q) params.set('q', filter.q);
  else if (workspace) {
    params.set('view', filter.view);
    if (filter.status) params.set('status', filter.status);
    if (filter.label) params.set('label', filter.label);
  } else if (filter.status === 'open') params.set('status', 'open');
  else if (filter.status === 'resolved') params.set('status', 'closed');
  if (cursor) params.set('cursor', cursor);
  return params;
}

/** The label names of the company's labels, in the server's order (most used first). */
export const labelNames = (answer: CompanyLabelsView): string[] => answer.labels.map((l) => l.label);

/** Whether a pushed entry belongs in the list as filtered now (search results are not followed live). */
export function belongs(c: ConversationView, filter: ListFilter, me: string): boolean {
  if (filter.q) return false;
  const resolved = c.status === 'closed' || c.status === 'resolved';
  if (filter.status === 'resolved' ? !resolved : filter.status && c.status !== filter.status) return false;
  if (filter.label && !(c.labels ?? []).includes(filter.label)) return false;
  if (filter.view === 'mine') return c.assignee_id === me;
  if (filter.view === 'unassigned') return !c.assignee_id;
  if (filter.view === 'queued') return Boolean(c.queued_at) && !c.assignee_id && !resolved;
  return true;
}

/**
 * When, as the list says it (short, like any chat inbox): the time for today, the day and month for this year, the
 * date before that; the full time goes in the element's title.
 */
export function listTime(iso: string | null | undefined, now: Date = new Date()): string {
  const d = new Date(iso ?? '');
  if (Number.isNaN(d.getTime())) return '';
  if (d.toDateString() === now.toDateString())
    return d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  if (d.getFullYear() === now.getFullYear())
    return d.toLocaleDateString([], { day: 'numeric', month: 'short' });
  return d.toLocaleDateString();
}

/** Unread conversations first, then the most recently changed (a stable order for equal keys). */
export function sortForList(items: ConversationView[]): ConversationView[] {
  return [...items].sort((a, b) => {
    const unread = Number(unreadOf(b) > 0) - Number(unreadOf(a) > 0);
    if (unread !== 0) return unread;
    return (b.updated_at ?? '').localeCompare(a.updated_at ?? '');
  });
}

/** The id in `/portal/inbox/{id}`, or undefined on the list itself. */
export function conversationIdFromPath(pathname: string): string | undefined {
  const match = /^\/portal\/inbox\/([^/]+)\/?$/.exec(pathname);
  return match ? decodeURIComponent(match[1]!) : undefined;
}

export const conversationPath = (id: string): string => `/portal/inbox/${encodeURIComponent(id)}`;

/** A message as far as the unread separator cares: who wrote it. */
interface RoleOnly {
  role: string;
}

/**
 * Where the "New messages" separator goes: before the oldest of the last `unread` visitor messages, or -1 when
 * nothing is unread (unread counts only visitor messages, so agents' and bots' messages in between stay below it).
 */
export function firstUnreadIndex(messages: RoleOnly[], unread: number): number {
  if (unread <= 0) return -1;
  let left = unread;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role !== 'user') continue;
    left -= 1;
    if (left === 0) return i;
  }
  return messages.length > 0 ? 0 : -1;
}

/** Snooze choices offered from `now`: in an hour, tomorrow 09:00, next Monday 09:00 (local time). */
export function snoozeChoices(now: Date): Array<{ label: string; until: Date }> {
  const at9 = (days: number) => {
    const d = new Date(now);
    d.setDate(d.getDate() + days);
    d.setHours(9, 0, 0, 0);
    return d;
  };
  const toMonday = (8 - now.getDay()) % 7 || 7;
  return [
    { label: 'For 1 hour', until: new Date(now.getTime() + 3_600_000) },
    { label: 'Until tomorrow 09:00', until: at9(1) },
    { label: 'Until Monday 09:00', until: at9(toMonday) },
  ];
}
