import type { Generated } from 'kysely';

/** Tables of the webchat (migrations 020–029). Timestamps are ISO-8601 UTC text, JSON is text (storage/columns.ts). */

export interface ChannelsTable {
  id: string;
  company_id: string;
  name: string;
  /** The digital employee that answers conversations started from this channel. */
  digital_employee_id: string;
  /** JSON array of browser origins allowed to use this channel; empty = the company's allowed origins. */
  allowed_origins: string;
  created_at: string;
  /** `off | optional | required` (migration 022; identity/channel-identity.ts). */
  identity_mode: Generated<string>;
  /** The identity secret visitor tokens are signed with, sealed (`Sealer`, slot `current`). */
  identity_secret: string | null;
  /** The secret before the last rotation, sealed (slot `previous`); verifies tokens until `identity_previous_until`. */
  identity_previous_secret: string | null;
  identity_previous_until: string | null;
}

export interface ConversationsTable {
  id: string;
  company_id: string;
  /** Null when the conversation was created without X-Channel-Id. */
  channel_id: string | null;
  /** The visitor's X-Session-Id; only this session may read or subscribe to the conversation. */
  session_id: string;
  digital_employee_id: string;
  /** `open | closed` (docs/architecture.md "Conversation states"). */
  status: string;
  /** Who answers while open: `digital_employee | agent`. */
  handled_by: string;
  /** Display name of the agent who took over, if any. */
  agent_name: string | null;
  /** Last position handed to a message; positions order the messages of a conversation. */
  last_position: number;
  created_at: string;
  updated_at: string;
  /** The verified visitor it belongs to (webchat/visitor.ts `visitorKeyOf`); null for an anonymous session's. */
  visitor_key: string | null;
  /** The visitor's `sub` (the integrator's user id), name and email, as their latest token carried them. */
  visitor_id: string | null;
  visitor_name: string | null;
  visitor_email: string | null;
  /** Read marks (migration 023): the position of the last message the visitor side / the agent side has read. */
  visitor_read_position: Generated<number>;
  agent_read_position: Generated<number>;
  /** Routing (migration 060): waiting in the company queue since, and the portal user assigned, since when. */
  queued_at: string | null;
  assignee_id: string | null;
  assigned_at: string | null;
  /**
   * The agent workspace (migration 120): the working status while `status` is `open` (`open | pending | snoozed`),
   * when a snoozed conversation wakes, the visitor's custom attributes (JSON object) and the page they started on.
   */
  workspace_status: Generated<string>;
  snoozed_until: string | null;
  visitor_attributes: string | null;
  page_url: string | null;
  /** JSON array of the labels (sorted), as `conversation_labels` holds them for filtering. */
  labels: string | null;
}

export interface MessagesTable {
  id: string;
  conversation_id: string;
  /** Order within the conversation, from 1; the paging cursor. */
  position: number;
  role: string;
  author_id: string | null;
  author_name: string | null;
  status: string;
  /** JSON array of blocks (the latest persisted snapshot). */
  blocks: string;
  client_message_id: string | null;
  /**
   * For a complete message, the sequence of its `complete` envelope. For a streaming reply, a reservation: it
   * reserves sequences ahead (reply-stream.ts) and writes the reservation before it publishes past it while the store
   * answers, and goes at most OUTAGE_SEQUENCES past it while it does not; so whoever finishes an interrupted message
   * publishes `sequenceAfter(sequence)` and every client accepts it.
   */
  sequence: number;
  created_at: string;
  updated_at: string;
  /** Notes only (migration 110): JSON `{author_type, mentions}`; null on every other message. */
  note_meta: string | null;
}

/** A user message waiting for, or getting, its digital-employee reply (migration 021). */
export interface ReplyJobsTable {
  /** The user message to answer. */
  message_id: string;
  conversation_id: string;
  /** The message's position: replies are given in this order, one at a time per conversation. */
  position: number;
  /** `queued`, or `running` on the node `node_id` until `lease_expires_at` (ms, database clock). */
  state: string;
  node_id: string | null;
  /** The reply being streamed, once it has started. */
  reply_message_id: string | null;
  lease_expires_at: number | null;
  queued_at: number;
}

/** The webchat's core tables; attachments, feedback, routing and canned responses add theirs from their folders. */
export interface WebchatTables {
  channels: ChannelsTable;
  conversations: ConversationsTable;
  messages: MessagesTable;
  reply_jobs: ReplyJobsTable;
  conversation_labels: ConversationLabelsTable;
  conversation_attributes: ConversationAttributesTable;
  mention_notifications: MentionNotificationsTable;
}

/** Agent workspace (migration 120, src/workspace/): a company label on a conversation, one row per label. */
export interface ConversationLabelsTable {
  conversation_id: string;
  company_id: string;
  label: string;
  created_at: string;
}

/** The visitor's custom attributes as rows, for the inbox filter `attr.KEY=VALUE` (values as text). */
export interface ConversationAttributesTable {
  conversation_id: string;
  key: string;
  value: string;
}

/** An agent mentioned in a private note: unread until they mark it read. */
export interface MentionNotificationsTable {
  id: string;
  company_id: string;
  user_id: string;
  conversation_id: string;
  message_id: string;
  author_name: string | null;
  preview: string;
  created_at: string;
  read_at: string | null;
}

// This capability's tables join the one database type (storage/schema.ts) from here, so the store knows no feature.
declare module '../storage/schema.ts' {
  interface Database extends WebchatTables {}
}
