/**
 * The webchat message model shared by the conversation engine, the REST reads, the realtime envelopes and the
 * digital-employee responders. The wire shapes are defined once in @parley/webchat-protocol (the SDK, the widget
 * and the portal read the same ones); this module re-exports them so the server's imports stay where they were.
 */
export {
  type AttachmentBlock,
  type Block,
  type BlockType,
  ENVELOPE_VERSION,
  type EnvelopeOperation,
  type ErrorBlock,
  type MarkdownBlock,
  type MessageAuthor,
  type MessageEnvelope,
  type MessageRole,
  type MessageSnapshot,
  type MessageStatus,
  type NoteAuthorType,
  type NoticeBlock,
  type SendAttachmentBlock,
  type SendMessage,
  type SendMessageBlock,
  type TypingBlock,
  textOf,
} from '@parley/webchat-protocol';
