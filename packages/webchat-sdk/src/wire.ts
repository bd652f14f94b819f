import type { ConversationView } from '@parley/webchat-protocol';

/**
 * Wire shapes of the Parley webchat protocol as the SDK receives and sends them. They are defined once in
 * @parley/webchat-protocol (bundled into the SDK, it has no dependencies); the SDK re-exports them under the names
 * it has always exported. What the SDK reads off the wire is the protocol's forward-compatible view: `Block` includes
 * blocks of unknown types (kept, not interpreted), `MessageSnapshot.position` may be missing, and `MessageEnvelope`
 * allows any version and operation until the envelope rules decide.
 */
export type {
  AttachmentBlock,
  CardBlock,
  CardButton,
  Csat,
  ErrorBlock,
  FeedbackRating,
  MarkdownBlock,
  MessageAuthor,
  MessageFeedback,
  MessageRole,
  OfferedChoice,
  PostbackBlock,
  QuickRepliesBlock,
  QuickReplyOption,
  ReceivedBlock as Block,
  ReceivedEnvelope as MessageEnvelope,
  ReceivedSnapshot as MessageSnapshot,
  SendMessage,
  SourceReference,
  SourcesBlock,
  TypingBlock,
  UnknownBlock,
  VisitorTyping,
} from '@parley/webchat-protocol';
/**
 * The protocol helpers the SDK uses: `choicesOf` (the choices a message offers for postbacks), the envelope version
 * this SDK understands (envelopes with any other version are ignored, spec Events rule 2) and `inFlightEnvelopes`.
 */
export {
  choicesOf,
  ENVELOPE_VERSION as SUPPORTED_ENVELOPE_VERSION,
  inFlightEnvelopes,
} from '@parley/webchat-protocol';

/**
 * A conversation as `POST/GET /sdk/v1/conversations` return it (the protocol's `ConversationView`). Only `id`,
 * `channel` and `created_at` are relied on; the rest may be missing from an older server, and fields a newer server
 * adds are kept.
 */
export interface Conversation
  extends Pick<ConversationView, 'id' | 'channel' | 'created_at'>,
    Partial<Omit<ConversationView, 'id' | 'channel' | 'created_at'>> {
  [field: string]: unknown;
}
