/**
 * Wire shapes of the Parley webchat protocol as the SDK receives and sends them (DESIGN.md "Webchat REST",
 * "MessageEnvelope", "SendMessage"). Field names are snake_case because they are exactly what the server sends.
 * The SDK keeps its own copy instead of importing the server's: it is bundled for browsers on its own.
 */

/** The envelope protocol version this SDK understands; envelopes with any other version are ignored (spec, Events rule 2). */
export const SUPPORTED_ENVELOPE_VERSION = 1;

export type MessageRole = 'user' | 'digital_employee' | 'agent' | 'system';

export interface TypingBlock {
  id: string;
  type: 'typing';
  typing: boolean;
}

export interface MarkdownBlock {
  id: string;
  type: 'markdown';
  content: string;
}

/** Why a message ended without (all of) its content; `message` is safe to show to a visitor. */
export interface ErrorBlock {
  id: string;
  type: 'error';
  code: string;
  message: string;
}

/** Blocks of a type this SDK does not know are kept (so nothing is lost) but not interpreted. */
export interface UnknownBlock {
  id: string;
  type: string;
  [field: string]: unknown;
}

export type Block = TypingBlock | MarkdownBlock | ErrorBlock | UnknownBlock;

export interface MessageAuthor {
  id: string;
  name: string;
}

/** The full current state of one message, as REST returns it and every envelope carries it. */
export interface MessageSnapshot {
  id: string;
  conversation_id: string;
  role: MessageRole;
  author: MessageAuthor | null;
  status: 'partial' | 'complete';
  blocks: Block[];
  client_message_id: string | null;
  created_at: string;
  updated_at: string;
}

/** One publication on a conversation channel: one step of one message's stream. */
export interface MessageEnvelope {
  version: number;
  operation: 'replace' | 'complete' | string;
  sequence: number;
  message_snapshot: MessageSnapshot;
}

/** What the SDK publishes on the conversation channel to send a visitor message. */
export interface SendMessage {
  version: typeof SUPPORTED_ENVELOPE_VERSION;
  client_message_id: string;
  blocks: Array<{ type: 'markdown'; content: string }>;
}

/** A conversation as `POST/GET /sdk/v1/conversations` return it. */
export interface Conversation {
  id: string;
  /** The realtime channel, `messages:companies.{companyId}.conversations.{conversationId}`. */
  channel: string;
  digital_employee_id?: string | null;
  channel_id?: string | null;
  status?: string;
  created_at: string;
  [field: string]: unknown;
}
