/**
 * @parley/webchat-protocol — the Parley webchat wire protocol in one place: the message, envelope and SendMessage
 * shapes, channel naming, the WebSocket path and the envelope rules. The server, the SDK, the widget and the portal
 * all import it; it has no dependencies and runs in browsers and Node.
 *
 * @example
 * ```ts
 * import { acceptsEnvelope, channelOf, readEnvelope } from '@parley/webchat-protocol';
 * ```
 */
export {
  ACTION_NOTE_EXCERPT_CHARS,
  type ActionCallNote,
  actionCallNoteText,
  readActionCallNote,
} from './action-call-note.ts';
export {
  type ChannelAddress,
  channelOf,
  EMULATION_PATH,
  HTTP_STREAM_PATH,
  MESSAGES_NAMESPACE_NAME,
  parseChannel,
  SSE_PATH,
  WEBSOCKET_PATH,
} from './channels.ts';
export type {
  BusinessHoursStatus,
  ConversationHandler,
  ConversationStatus,
  ConversationView,
  ConversationVisitorView,
  Csat,
  CsatView,
  FeedbackRating,
  MessageFeedback,
  MessageFeedbackView,
  PlatformConversationView,
  VisitorAttributes,
  WorkspaceStatus,
} from './conversations.ts';
export {
  acceptsEnvelope,
  type EnvelopeReading,
  type EnvelopeRefusal,
  isEnvelopeOperation,
  isReceivedSnapshot,
  type KnownEnvelope,
  readEnvelope,
} from './envelope-rules.ts';
export {
  ENVELOPE_OPERATIONS,
  ENVELOPE_VERSION,
  type EnvelopeOperation,
  envelopeOf,
  type InFlightMessages,
  inFlightEnvelopes,
  isTypingPublication,
  type MessageEnvelope,
  type ReceivedEnvelope,
  type SendAttachmentBlock,
  type SendMarkdownBlock,
  type SendMessage,
  type SendMessageBlock,
  type SendPostbackBlock,
  VISITOR_TYPING_RELAY_MS,
  type VisitorTyping,
} from './envelopes.ts';
export {
  HANDOVER_SUMMARY_HEADING,
  handoverSummaryNoteText,
  readHandoverSummaryNote,
} from './handover-summary-note.ts';
export {
  type AgentRef,
  INBOX_NAMESPACE_NAME,
  type InboxConversationView,
  type InboxEvent,
  type InboxMention,
  type InboxNote,
  type InboxPublication,
  type InboxStatus,
  type InboxVisitorTyping,
  inboxChannelOf,
  type LastMessagePreview,
  type MentionNotification,
  NOTE_LIMITS,
  type NoteView,
} from './inbox.ts';
export {
  type BlockProblem,
  type CardBlock,
  type CardButton,
  choicesOf,
  INTERACTIVE_LIMITS,
  type InteractiveBlockInput,
  type InteractiveBlocksReading,
  isInteractiveType,
  type OfferedChoice,
  type PostbackBlock,
  type QuickRepliesBlock,
  type QuickReplyOption,
  readInteractiveBlocks,
} from './interactive-blocks.ts';
export {
  type AttachmentBlock,
  type AttachmentView,
  type Block,
  type BlockType,
  type ErrorBlock,
  type MarkdownBlock,
  type MessageAuthor,
  type MessageRole,
  type MessageSnapshot,
  type MessageStatus,
  type NoteAuthorType,
  type NoticeBlock,
  type NoticeKind,
  RASTER_IMAGE_TYPES,
  type ReceivedBlock,
  type ReceivedSnapshot,
  type ReplyBlockInput,
  type SourceReference,
  type SourcesBlock,
  type StatusBlock,
  type TypingBlock,
  textOf,
  type UnknownBlock,
} from './messages.ts';
export { type ReadEvent, type ReadMarks, type ReadSide, readEventOf, readMarksOf } from './reads.ts';
export {
  ATTRIBUTE_LIMITS,
  type AttributesReading,
  attributeText,
  readVisitorAttributes,
} from './visitor-attributes.ts';
