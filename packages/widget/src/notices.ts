import type { NoticeBlock } from '@parley/webchat-protocol';
import type { ChatMessage } from '@parley/webchat-sdk';
import { fill } from './language.ts';
import type { WidgetStrings } from './strings/en.ts';

/** A system notice's `notice` block (docs/design.md "System notices"), if the server sent one. */
export function noticeOf(message: ChatMessage): NoticeBlock | undefined {
  if (message.role !== 'system') return undefined;
  return message.blocks.find((b): b is NoticeBlock => b.type === 'notice');
}

/**
 * The text of a system notice in the visitor's language: the widget's own words for a notice it knows, the server's
 * (English) text otherwise.
 */
export function noticeText(message: ChatMessage, strings: WidgetStrings, locale: string): string {
  const notice = noticeOf(message);
  switch (notice?.notice) {
    case 'human_requested':
      return notice.next_open_at
        ? fill(strings.agentsAway, { time: formatWhen(notice.next_open_at, locale) })
        : strings.waitingForPerson;
    case 'agent_joined':
      return notice.agent_name
        ? fill(strings.agentJoined, { name: notice.agent_name })
        : strings.someoneJoined;
    case 'handed_back':
      return strings.handedBack;
    case 'closed':
      return strings.conversationEnded;
    case 'assistant_unavailable':
      return strings.assistantUnavailable;
    default:
      return message.text;
  }
}

/**
 * One hand-off notice (issue: it showed twice and kept the stale one): a request for a person that an agent then
 * answered shows as the agent's "Kim joined the conversation" in the request's place, and the join notice is not
 * shown again below. A request nobody has answered yet stays as it is; a hand-back or close ends the hand-off.
 */
export function mergeHandoffNotices(messages: readonly ChatMessage[]): {
  /** Request notice key → the join notice it now shows. */
  shownAs: Map<string, ChatMessage>;
  /** Join notices shown in their request's place. */
  hidden: Set<string>;
} {
  const shownAs = new Map<string, ChatMessage>();
  const hidden = new Set<string>();
  let request: ChatMessage | null = null;
  for (const message of messages) {
    const kind = noticeOf(message)?.notice;
    if (kind === 'human_requested') request = message;
    else if (kind === 'agent_joined' && request) {
      shownAs.set(request.key, message);
      hidden.add(message.key);
      request = null;
    } else if (kind === 'handed_back' || kind === 'closed') request = null;
  }
  return { shownAs, hidden };
}

/** A moment as the visitor reads it: the time today, else the date and time. */
export function formatWhen(iso: string, locale: string, now = new Date()): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const sameDay = date.toDateString() === now.toDateString();
  const options: Intl.DateTimeFormatOptions = sameDay
    ? { hour: '2-digit', minute: '2-digit' }
    : { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' };
  try {
    return new Intl.DateTimeFormat(locale, options).format(date);
  } catch {
    return date.toLocaleString();
  }
}
