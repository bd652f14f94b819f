import type {
  InboxConversationView,
  InboxStatus,
  MessageSnapshot,
  PlatformConversationView,
  ReadMarks,
  VisitorAttributes,
  WorkspaceStatus,
} from '@parley/webchat-protocol';

// The inbox's conversation entry, messages and notes are the webchat protocol's (packages/webchat-protocol): the
// realtime engine publishes the same shapes. What only `/portal/api/inbox/…` answers is declared here.

/** `GET /portal/api/inbox/conversations`: unread first within the view, then most recently active. */
export interface InboxConversationPage {
  items: InboxConversationView[];
  next_cursor: string | null;
}

/** The latest message of a search hit that holds the query's words. */
export interface MessageMatchView {
  message_id: string;
  role: string;
  excerpt: string;
  created_at: string;
}

/** `GET /portal/api/inbox/search`: inbox entries with `match` (null when only the visitor or the id matched). */
export interface InboxSearchPage {
  items: Array<InboxConversationView & { match: MessageMatchView | null }>;
  next_cursor: string | null;
}

/** `GET /portal/api/inbox/queue`: the conversations waiting for an agent. */
export interface InboxQueue {
  items: PlatformConversationView[];
}

/** The visitor panel beside a conversation (docs/design.md "Agent workspace"). */
export interface VisitorPanelView {
  /** The verified visitor's `sub`; null for an anonymous visitor. */
  sub: string | null;
  anonymous: boolean;
  name?: string;
  email?: string;
  attributes: VisitorAttributes;
  channel: { id: string; name: string } | null;
  page_url?: string;
  /** Earlier conversations of the same visitor, newest first. */
  previous_conversations: Array<{
    id: string;
    created_at: string;
    status: InboxStatus;
    last_message_preview: string | null;
  }>;
  /** Files shared in this conversation, newest first, with fresh signed links. */
  files: Array<{ id: string; name: string; content_type: string; size: number; url: string }>;
}

/** The newest hand-over summary of a conversation, without its heading. */
export interface HandoverSummaryView {
  text: string;
  created_at: string;
}

/** `GET /portal/api/inbox/conversations/{id}`: the conversation, its transcript with notes, and the workspace fields. */
export interface InboxConversationDetail {
  conversation: InboxConversationView;
  /** The latest 200 messages, notes among them (role `note`). */
  messages: MessageSnapshot[];
  read_marks: ReadMarks;
  status: InboxStatus;
  snoozed_until: string | null;
  labels: string[];
  visitor: VisitorPanelView;
  summary: HandoverSummaryView | null;
}

/** `PUT /portal/api/inbox/conversations/{id}/status`. */
export interface WorkspaceStatusView {
  id: string;
  status: WorkspaceStatus;
  snoozed_until: string | null;
}

/** `PUT /portal/api/inbox/conversations/{id}/labels`. */
export interface ConversationLabelsView {
  id: string;
  labels: string[];
}

/** `GET /portal/api/labels`: the company's labels in use, most used first. */
export interface CompanyLabelsView {
  labels: Array<{ label: string; conversations: number }>;
}

/**
 * `POST /portal/api/inbox/realtime` and `…/conversations/{id}/realtime`: a connection token and a subscription
 * token for one channel (docs/routing.md "Live inbox").
 */
export interface RealtimeGrantView {
  websocket_url: string;
  connection_token: string;
  /** Seconds. */
  connection_expires_in: number;
  subscription_token: string;
  /** Seconds. */
  subscription_expires_in: number;
  channel: string;
}

/** `POST /portal/api/inbox/conversations/{id}/summarise`: markdown, by the model or extractive. */
export interface ConversationSummaryView {
  summary: string;
}

/** A reply suggested from the company's knowledge, with the sources it came from. */
export interface SuggestedReplyView {
  text: string;
  sources: Array<{ source_id: string; title: string; url?: string }>;
}

/** `GET /portal/api/inbox/conversations/{id}/suggestions`, best first. */
export interface SuggestedRepliesView {
  suggestions: SuggestedReplyView[];
}
