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
  /** The sequence of the last envelope published for this message. */
  sequence: number;
  created_at: string;
  updated_at: string;
}

export interface WebchatTables {
  channels: ChannelsTable;
  conversations: ConversationsTable;
  messages: MessagesTable;
}
