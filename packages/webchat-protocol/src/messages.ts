import type {
  CardBlock,
  InteractiveBlockInput,
  PostbackBlock,
  QuickRepliesBlock,
} from './interactive-blocks.ts';

/**
 * The message model of the webchat wire protocol: what REST returns for a message and what every envelope carries
 * (docs/asyncapi.yaml "MessageSnapshot"). Field names are snake_case because they are exactly what goes over the
 * wire.
 */

/**
 * Who a message is from: the visitor, the digital employee, a human agent, or the service itself; `note` is an
 * internal note for agents only (an agent's, the digital employee's or the service's, e.g. a hand-over summary or
 * an action call): it is shown in platform and portal reads only and never reaches a visitor's client (SDK reads,
 * envelopes, history recovery and `message.created` webhooks all leave it out).
 */
export type MessageRole = 'user' | 'digital_employee' | 'agent' | 'system' | 'note';

/** Who wrote a note: an agent (portal user or API client), the digital employee, or Parley itself. */
export type NoteAuthorType = 'agent' | 'digital_employee' | 'system';

/** `partial` while a reply streams; `complete` once it is final (a complete message never changes again). */
export type MessageStatus = 'partial' | 'complete';

/** A typing indicator; shown in a partial snapshot before any content arrives (spec "Events", client rule 3). */
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

/**
 * A file the visitor or an agent attached (docs/design.md "Attachments"). `url` is a signed download link that
 * needs no headers (an `<img>` can load it) and expires after an hour: every read (REST, envelope, history) carries
 * a fresh one, so take it from the latest snapshot rather than keeping it.
 */
export interface AttachmentBlock {
  id: string;
  type: 'attachment';
  attachment_id: string;
  /** The sanitized file name. */
  name: string;
  /** Detected from the file's bytes: `image/png`, `image/jpeg`, `image/gif`, `image/webp`, `application/pdf`, `text/plain` or `image/svg+xml`. */
  content_type: string;
  /** Bytes. */
  size: number;
  url: string;
}

/**
 * The attachment types an `<img>` can show: the server serves them inline, clients show them as thumbnails; every
 * other type is a file to download.
 */
export const RASTER_IMAGE_TYPES: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
]);

/**
 * An uploaded attachment, as `POST /sdk/v1/conversations/{id}/attachments` answers (docs/design.md "Attachments");
 * a SendMessage's attachment block names it by `id`.
 */
export interface AttachmentView {
  id: string;
  /** The file name as the server cleaned it. */
  name: string;
  /** Detected by the server from the bytes. */
  content_type: string;
  size: number;
  /** Lowercase hex SHA-256 of the bytes. */
  sha256: string;
  /** Signed download link, valid for 1 hour, needs no headers (an `<img src>` can use it). */
  url: string;
}

/** What a system notice is about: asked for a person, an agent joined, back with the digital employee, closed, unavailable. */
export type NoticeKind =
  | 'human_requested'
  | 'agent_joined'
  | 'handed_back'
  | 'closed'
  | 'assistant_unavailable';

/**
 * What a system notice means, for clients (docs/design.md "System notices"): it follows the notice's markdown block,
 * which says the same in English, so a client can show the notice in the visitor's language, and update the earlier
 * notice of one hand-off (the request for a person becomes "Kim joined") instead of adding another.
 */
export interface NoticeBlock {
  id: string;
  type: 'notice';
  notice: NoticeKind;
  /** `agent_joined`: the agent's display name, when it is known. */
  agent_name?: string | null;
  /** `human_requested` while the agents are away: when they are back (ISO 8601); `null` when unknown. */
  next_open_at?: string | null;
}

/** One source a reply is based on (docs/knowledge.md): a knowledge source of the company and where to read it. */
export interface SourceReference {
  source_id: string;
  title: string;
  /** An http(s) link to the source, when it has one; clients open nothing else. */
  url?: string;
  /** A short excerpt of the passage the reply used. */
  snippet?: string;
}

/**
 * What a digital employee's reply is based on, most relevant (or first cited) first. It follows the reply's markdown
 * block(s) and comes before any `quick_replies` or `card` block; a reply not based on knowledge has none.
 */
export interface SourcesBlock {
  id: string;
  type: 'sources';
  sources: SourceReference[];
}

/**
 * Blocks a digital employee's reply adds after its markdown (the server assigns the ids): what it is based on
 * (`sources`, placed first) and the choices it offers.
 */
export type ReplyBlockInput = Omit<SourcesBlock, 'id'> | InteractiveBlockInput;

/** Every block type this protocol version defines; what a server of this version sends. */
/**
 * What the digital employee is doing right now, e.g. "Looking up your order…" while one of its actions runs
 * (docs/design.md "Actions"): only in `partial` snapshots, replaced or removed by the next one, never in a
 * `complete` one. Clients show it under the reply's text while it is there.
 */
export interface StatusBlock {
  id: string;
  type: 'status';
  text: string;
}

export type Block =
  | TypingBlock
  | MarkdownBlock
  | StatusBlock
  | ErrorBlock
  | AttachmentBlock
  | NoticeBlock
  | SourcesBlock
  // Interactive blocks: choices offered and the visitor's answer (interactive-blocks.ts).
  | QuickRepliesBlock
  | CardBlock
  | PostbackBlock;

/** The `type` of a {@link Block}. */
export type BlockType = Block['type'];

/** The digital employee or agent who wrote a message. */
export interface MessageAuthor {
  id: string;
  name: string;
  /** On notes only: what kind of author wrote it. */
  type?: NoteAuthorType;
}

/** The full current state of one message: what REST returns and what every envelope carries. */
export interface MessageSnapshot {
  id: string;
  conversation_id: string;
  role: MessageRole;
  /**
   * Who wrote it: the digital employee or the agent; for a verified visitor's own messages `{id: sub, name}` from
   * their visitor token; `null` for an anonymous visitor's messages and system notices.
   */
  author: MessageAuthor | null;
  status: MessageStatus;
  blocks: Block[];
  /** The client's idempotency key for user messages (SendMessage), `null` otherwise. */
  client_message_id: string | null;
  /**
   * The message's place in its conversation, from 1: the one order every client and node agrees on (timestamps of
   * messages created in the same millisecond, or on nodes whose clocks differ, do not order them).
   */
  position: number;
  created_at: string;
  updated_at: string;
  /**
   * The visitor's rating, on REST reads of a rated digital-employee or agent message (absent otherwise, and in
   * envelopes).
   */
  feedback?: { rating: 'up' | 'down'; comment: string | null };
  /** On notes only: the portal users of the company the note mentions (ids). */
  mentions?: string[];
}

/**
 * A block of a type this protocol version does not define, e.g. from a newer server. Clients keep it (so nothing
 * is lost) but do not interpret it.
 */
export interface UnknownBlock {
  id: string;
  type: string;
  [field: string]: unknown;
}

/** A block as a client reads it off the wire: a known one, or one of a type it does not know. */
export type ReceivedBlock = Block | UnknownBlock;

/**
 * A snapshot as a client reads it off the wire, forward compatible: blocks of unknown types are allowed, and
 * `position` may be missing (a server that predates it; clients then order by `created_at` and `id`). Every
 * {@link MessageSnapshot} is one.
 */
export interface ReceivedSnapshot extends Omit<MessageSnapshot, 'blocks' | 'position'> {
  blocks: ReceivedBlock[];
  position?: number;
}

/**
 * The text of a message: its markdown blocks' content and its postbacks' labels (a tapped choice reads as what the
 * visitor would have typed), joined by blank lines; typing, error, offers and unknown blocks contribute nothing. A
 * responder's prompt, the SDK's `ChatMessage.text`.
 *
 * @example
 * ```ts
 * textOf({ blocks: [{ id: 'b1', type: 'markdown', content: 'Hello' }] }); // 'Hello'
 * ```
 */
export function textOf(message: { readonly blocks: readonly ReceivedBlock[] }): string {
  return (
    message.blocks
      .filter((b) => b.type === 'markdown' || b.type === 'postback')
      // Off the wire a block may lack its text (a malformed or foreign server): it adds no text then.
      .map((b) =>
        String(
          (b.type === 'postback' ? (b as { label?: unknown }).label : (b as { content?: unknown }).content) ??
            '',
        ),
      )
      .join('\n\n')
  );
}
