/**
 * The webchat message model shared by the conversation engine, the REST reads, the realtime envelopes and the
 * digital-employee responders (DESIGN.md "MessageEnvelope", "SendMessage"). These are wire shapes: field names are
 * snake_case because they are exactly what clients receive; docs/asyncapi.yaml describes the same shapes.
 */

/** The envelope protocol version this server speaks; clients ignore envelopes with a version they do not know. */
export const ENVELOPE_VERSION = 1 as const;

export type MessageRole = 'user' | 'digital_employee' | 'agent' | 'system';
export type MessageStatus = 'partial' | 'complete';

/** A typing indicator; shown in a partial snapshot before any content arrives. */
export interface TypingBlock {
  id: string;
  type: 'typing';
  typing: boolean;
}

/** Markdown text; in a streamed reply its content grows from one snapshot to the next. */
export interface MarkdownBlock {
  id: string;
  type: 'markdown';
  content: string;
}

/**
 * Why a message ended without (all of) its content: a failed or timed-out responder, or a restart mid-stream.
 * `code` is stable (docs/errors.md), `message` is safe to show to a visitor.
 */
export interface ErrorBlock {
  id: string;
  type: 'error';
  code: string;
  message: string;
}

export type Block = TypingBlock | MarkdownBlock | ErrorBlock;
export type BlockType = Block['type'];

export interface MessageAuthor {
  id: string;
  name: string;
}

/** The full current state of one message: what REST returns and what every envelope carries. */
export interface MessageSnapshot {
  id: string;
  conversation_id: string;
  role: MessageRole;
  /** Who wrote it: the digital employee or the agent; `null` for the visitor's own messages and system notices. */
  author: MessageAuthor | null;
  status: MessageStatus;
  blocks: Block[];
  /** The client's idempotency key for user messages (SendMessage), `null` otherwise. */
  client_message_id: string | null;
  created_at: string;
  updated_at: string;
}

export type EnvelopeOperation = 'replace' | 'complete';

/** A publication on a conversation channel: one step of one message's stream. */
export interface MessageEnvelope {
  version: typeof ENVELOPE_VERSION;
  /** `replace` carries a partial snapshot; `complete` the final one. */
  operation: EnvelopeOperation;
  /** Counts the envelopes of one message from 1; clients drop one that is not above the last seen. */
  sequence: number;
  message_snapshot: MessageSnapshot;
}

/** A block as a client sends it: only markdown, the server assigns ids. */
export interface SendMessageBlock {
  type: 'markdown';
  content: string;
}

/** What a visitor publishes on its conversation channel to send a message. */
export interface SendMessage {
  version: typeof ENVELOPE_VERSION;
  /** Client-generated UUID; a retry with the same id never creates a second message. */
  client_message_id: string;
  blocks: SendMessageBlock[];
}

/** The markdown text of a message (blocks joined by blank lines), e.g. for a responder's prompt. */
export function textOf(message: Pick<MessageSnapshot, 'blocks'>): string {
  return message.blocks
    .filter((b): b is MarkdownBlock => b.type === 'markdown')
    .map((b) => b.content)
    .join('\n\n');
}
