import type { Csat, PlatformConversationView, WorkspaceStatus } from './conversations.ts';
import type { MessageRole, NoteAuthorType } from './messages.ts';

/**
 * The agents' live inbox (docs/routing.md "Live inbox"): one realtime channel per company, `inbox:companies.{id}`,
 * on which the server publishes an {@link InboxEvent} whenever a conversation of the company changes (created, a
 * message completed, queued, assigned, handed over or back, closed). Only portal users of the company get a
 * subscription token for it; nobody publishes on it but the server.
 */
export const INBOX_NAMESPACE_NAME = 'inbox';

export const inboxChannelOf = (companyId: string): string => `${INBOX_NAMESPACE_NAME}:companies.${companyId}`;

/** The latest complete message, as the inbox list previews it. */
export interface LastMessagePreview {
  role: MessageRole;
  /** Plain text (markdown markers removed), at most 140 characters; attachments as their names. */
  text: string;
  created_at: string;
}

/** The status the portal inbox shows and filters by: `resolved` is a closed conversation. */
export type InboxStatus = WorkspaceStatus | 'resolved';

/** An agent as colleagues see them: their display name (and initials drawn from it). */
export interface AgentRef {
  id: string;
  name: string;
}

/**
 * A conversation as the inbox lists it: the agent view with its inbox status, labels, unread count and flag, the
 * assignee, CSAT and the last message (docs/design.md "Agent workspace").
 */
export interface InboxConversationView extends Omit<PlatformConversationView, 'status'> {
  status: InboxStatus;
  snoozed_until: string | null;
  labels: string[];
  /** Whether the visitor wrote after the agents' read mark. */
  unread: boolean;
  assignee: AgentRef | null;
  unread_count: number;
  csat: Csat | null;
  last_message: LastMessagePreview | null;
}

/** What the server publishes on the inbox channel when a conversation changes. */
export interface InboxEvent {
  version: 1;
  type: 'conversation';
  conversation: InboxConversationView;
}

/**
 * A visitor is typing in one of the company's conversations (docs/asyncapi.yaml "InboxVisitorTyping"): relayed from
 * the visitor's `{"version":1,"event":"typing"}` publication, at most one per session every 2 s, never stored nor
 * kept in the channel's history. The inbox shows "Visitor is typing…" for a few seconds after the last one.
 */
export interface InboxVisitorTyping {
  version: 1;
  event: 'visitor_typing';
  conversation_id: string;
  /** When the server relayed it (RFC 3339). */
  at: string;
}

/** A note's longest text (UTF-8 bytes: a long hand-over summary fits, a pasted log does not) and most mentions. */
export const NOTE_LIMITS = { textBytes: 16_000, mentions: 20 } as const;

/** An internal note as `POST /platform/v1/conversations/{id}/notes` answers it (docs/design.md "Internal notes"). */
export interface NoteView {
  id: string;
  conversation_id: string;
  role: 'note';
  text: string;
  author: { type: NoteAuthorType; id: string; name: string };
  /** Portal users of the company the note mentions (ids). */
  mentions: string[];
  position: number;
  created_at: string;
}

/**
 * A note was written in one of the company's conversations (docs/asyncapi.yaml "InboxNote"): live only, for the
 * agents following the inbox; never published on the conversation channel.
 */
export interface InboxNote {
  version: 1;
  event: 'note';
  conversation_id: string;
  note: NoteView;
}

/**
 * An agent was @mentioned in a note (docs/asyncapi.yaml "InboxMention"): live only, on the company's inbox channel
 * (every agent of the company may read the note anyway); the inbox of `user_id` shows it, and it stays listed in
 * `GET /portal/api/notifications` until that agent marks it read.
 */
export interface InboxMention {
  version: 1;
  event: 'mention';
  /** The agent mentioned. */
  user_id: string;
  conversation_id: string;
  notification: MentionNotification;
}

/** An unread (or read) mention of an agent, as `GET /portal/api/notifications` lists it. */
export interface MentionNotification {
  id: string;
  conversation_id: string;
  message_id: string;
  author_name: string | null;
  /** The note's text, at most 140 characters. */
  preview: string;
  created_at: string;
  read_at: string | null;
}

/** Anything the server publishes on the inbox channel: a conversation entry has `type`, a transient event `event`. */
export type InboxPublication = InboxEvent | InboxVisitorTyping | InboxNote | InboxMention;
