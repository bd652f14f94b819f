/**
 * @parley/webchat-sdk — the browser/Node client for Parley webchat.
 *
 * @example
 * ```ts
 * import { createWebchat } from '@parley/webchat-sdk';
 * const chat = await createWebchat({ baseUrl: 'https://chat.example.com', companyId: '…', channelId: '…' });
 * chat.on('messages', (messages) => render(messages));
 * await chat.send('Hello!');
 * ```
 */
export { WebchatError } from './errors.ts';
export type { CentrifugeTuning } from './options.ts';
export { peekUnread } from './peek.ts';
export type { BusinessHoursStatus, FetchLike, RealtimeConfig } from './rest-client.ts';
export { RestClient } from './rest-client.ts';
export type { KeyValueStorage } from './session-storage.ts';
export { defaultStorage, memoryStorage, SessionStore } from './session-storage.ts';
export type { ApplyOutcome, ApplyResult, ChatMessage, ChatMessageStatus } from './transcript.ts';
export { openOfferIn, Transcript } from './transcript.ts';
export type { Attachment, UploadOptions, UploadProgress } from './uploads.ts';
export type { GetVisitorToken } from './visitor-tokens.ts';
export { VisitorTokens } from './visitor-tokens.ts';
export type {
  ConnectionChange,
  ConnectionState,
  RealtimeTransport,
  WebchatEvents,
  WebchatOptions,
} from './webchat.ts';
export { createWebchat, Webchat } from './webchat.ts';
export type {
  AttachmentBlock,
  Block,
  CardBlock,
  CardButton,
  Conversation,
  Csat,
  ErrorBlock,
  FeedbackRating,
  MarkdownBlock,
  MessageAuthor,
  MessageEnvelope,
  MessageFeedback,
  MessageRole,
  MessageSnapshot,
  OfferedChoice,
  PostbackBlock,
  QuickRepliesBlock,
  QuickReplyOption,
  SendMessage,
  SourceReference,
  SourcesBlock,
  TypingBlock,
  VisitorTyping,
} from './wire.ts';
export { choicesOf, SUPPORTED_ENVELOPE_VERSION } from './wire.ts';
