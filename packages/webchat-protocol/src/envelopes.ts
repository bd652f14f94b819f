import type { MessageSnapshot, ReceivedSnapshot } from './messages.ts';
import type { ReadMarks } from './reads.ts';
import { ENVELOPE_VERSION } from './version.ts';

export { ENVELOPE_VERSION } from './version.ts';

/** `replace` carries a partial snapshot; `complete` the final one. */
export type EnvelopeOperation = 'replace' | 'complete';

/** Every operation this protocol version defines, for checking one read off the wire. */
export const ENVELOPE_OPERATIONS: readonly EnvelopeOperation[] = ['replace', 'complete'];

/** A publication on a conversation channel: one step of one message's stream (docs/asyncapi.yaml "MessageEnvelope"). */
export interface MessageEnvelope {
  version: typeof ENVELOPE_VERSION;
  /** `replace` carries a partial snapshot; `complete` the final one. */
  operation: EnvelopeOperation;
  /** Counts the envelopes of one message from 1; clients drop one that is not above the last seen. */
  sequence: number;
  message_snapshot: MessageSnapshot;
}

/**
 * An envelope as a client reads it off the wire, before the rules decide about it: any version or operation, and a
 * {@link ReceivedSnapshot}. Every {@link MessageEnvelope} is one.
 */
export interface ReceivedEnvelope {
  version: number;
  operation: EnvelopeOperation | string;
  sequence: number;
  message_snapshot: ReceivedSnapshot;
}

/**
 * The envelope that announces `snapshot` as the `sequence`-th step of its message: `complete` for a complete
 * snapshot, `replace` for a partial one.
 *
 * @example
 * ```ts
 * broadcaster.publish(channelOf(companyId, snapshot.conversation_id), envelopeOf(snapshot, 3));
 * ```
 */
export function envelopeOf(snapshot: MessageSnapshot, sequence: number): MessageEnvelope {
  return {
    version: ENVELOPE_VERSION,
    operation: snapshot.status === 'complete' ? 'complete' : 'replace',
    sequence,
    message_snapshot: snapshot,
  };
}

/** A markdown block as a client sends it (the server assigns ids). */
export interface SendMarkdownBlock {
  type: 'markdown';
  content: string;
}

/** An attachment of this conversation, uploaded first (`POST …/conversations/{id}/attachments`), by its id. */
export interface SendAttachmentBlock {
  type: 'attachment';
  attachment_id: string;
}

/**
 * One postback naming an offered choice (interactive-blocks.ts; the server stores the label it offered). It is the
 * message's only block.
 */
export interface SendPostbackBlock {
  type: 'postback';
  option_id: string;
  label: string;
}

/** A block as a client sends it; a message may hold only attachments. */
export type SendMessageBlock = SendMarkdownBlock | SendAttachmentBlock | SendPostbackBlock;

/** What a visitor publishes on its conversation channel to send a message (docs/asyncapi.yaml "SendMessage"). */
export interface SendMessage {
  version: typeof ENVELOPE_VERSION;
  /** Client-generated UUID; a retry with the same id never creates a second message. */
  client_message_id: string;
  blocks: SendMessageBlock[];
}

/**
 * What a visitor publishes on its conversation channel to say it is typing (docs/asyncapi.yaml "VisitorTyping").
 * Told apart from a {@link SendMessage} by its `event` member. The server stores nothing, relays at most one per
 * session every {@link VISITOR_TYPING_RELAY_MS} to the company's agents (the inbox channel's
 * `visitor_typing` event) and drops the rest silently; it never reaches the visitor channel nor webhooks.
 */
export interface VisitorTyping {
  version: typeof ENVELOPE_VERSION;
  event: 'typing';
}

/** The server relays at most one {@link VisitorTyping} per session in this many milliseconds. */
export const VISITOR_TYPING_RELAY_MS = 2000;

/** Whether a client publication is a {@link VisitorTyping} (rather than a SendMessage): it has an `event` member. */
export const isTypingPublication = (data: unknown): boolean =>
  data !== null && typeof data === 'object' && !Array.isArray(data) && 'event' in data;

/**
 * The subscribe result `data` of a conversation channel (docs/asyncapi.yaml "InFlightMessages"): the replies still
 * streaming, each in its latest known state. Channel history keeps only complete messages, so this is how a client
 * that joins or returns mid-reply learns of one; each envelope follows the usual ordering rule.
 */
export interface InFlightMessages {
  in_flight: MessageEnvelope[];
  /** Each side's read mark (a server of this version always sends them; see {@link ReadMarks}). */
  read_marks?: ReadMarks;
}

/**
 * The envelopes of a subscribe result's `data` ({@link InFlightMessages}), each still to be read with the envelope
 * rules; an empty list for data of any other shape (a server that sends none, or something else).
 *
 * @example
 * ```ts
 * subscription.on('subscribed', (ctx) => inFlightEnvelopes(ctx.data).forEach(apply));
 * ```
 */
export function inFlightEnvelopes(data: unknown): unknown[] {
  if (typeof data !== 'object' || data === null) return [];
  const list = (data as { in_flight?: unknown }).in_flight;
  return Array.isArray(list) ? list : [];
}
