import { INTERACTIVE_LIMITS, type VisitorTyping } from '@parley/webchat-protocol';
import { isUuid } from '../../companies/companies.service.ts';
import { findUnsafeText, UNSAFE_TEXT_MESSAGE } from '../../http/unsafe-text.ts';
import { ENVELOPE_VERSION, type SendMessage, type SendMessageBlock } from './message.ts';
import { type MessageLimits, messageTooLarge } from './message-limits.ts';

/**
 * Reply error codes of a refused publish on a conversation channel. Centrifugo reserves 0–399 for itself and
 * leaves 400–1999 to applications (docs/protocol.md "Reply error codes"); the SDK rejects the `publish()` promise
 * with `{code, message}` and the subscription keeps working. Listed in docs/errors.md and docs/asyncapi.yaml.
 */
export const PUBLISH_CODES = {
  /**
   * Not a SendMessage: wrong shape, missing fields, bad client_message_id, unknown block type, or a string holding
   * U+0000 or an unpaired surrogate (the HTTP edge's rule, src/http/unsafe-text.ts); also an attachment block naming
   * no attachment of this conversation (attachments/attachments.service.ts `blocksOf`).
   */
  invalidMessage: 400,
  /**
   * A postback naming a choice the latest digital-employee or agent message does not offer (an unknown id, a stale
   * offer, a url button); the message starts with `postback_not_offered` (docs/errors.md).
   */
  postbackNotOffered: 400,
  /** `version` is not one this server speaks. */
  unsupportedVersion: 401,
  /** The channel is not a conversation of this session. */
  conversationNotFound: 404,
  /** The conversation is closed. */
  conversationClosed: 409,
  /** Over `maxMessageBytes` or `maxBlocks`. */
  messageTooLarge: 413,
  /** Over the per-session or per-IP message limit. */
  tooManyMessages: 429,
} as const;

export class PublishRefusal extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'PublishRefusal';
  }
}

export type SendMessageLimits = MessageLimits;

const tooLarge = (why: string) => new PublishRefusal(PUBLISH_CODES.messageTooLarge, why);

const invalid = (why: string) =>
  new PublishRefusal(PUBLISH_CODES.invalidMessage, `invalid SendMessage: ${why}`);

/** `{"type":"attachment","attachment_id"}`: whose attachment it is, the publish hook checks with the store. */
function attachmentBlockOf(b: Record<string, unknown>, i: number): SendMessageBlock {
  if (typeof b.attachment_id !== 'string' || !isUuid(b.attachment_id))
    throw invalid(`blocks[${i}].attachment_id must be a UUID`);
  const extra = unknownFieldOf(b, ATTACHMENT_FIELDS);
  if (extra !== undefined) throw invalid(`blocks[${i}] has unknown field "${extra}"`);
  return { type: 'attachment', attachment_id: b.attachment_id.toLowerCase() };
}

/** Checks a client publication against the SendMessage schema (docs/asyncapi.yaml) and the size limits. */
export function parseSendMessage(data: unknown, limits: SendMessageLimits): SendMessage {
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw invalid('expected a JSON object');
  const unsafe = findUnsafeText(data);
  if (unsafe !== undefined) throw invalid(`${unsafe} ${UNSAFE_TEXT_MESSAGE}`);
  const input = data as Record<string, unknown>;
  if (input.version !== ENVELOPE_VERSION) {
    throw new PublishRefusal(
      PUBLISH_CODES.unsupportedVersion,
      `unsupported SendMessage version (this server speaks ${ENVELOPE_VERSION})`,
    );
  }
  const extra = unknownFieldOf(input, SEND_MESSAGE_FIELDS);
  if (extra !== undefined) throw invalid(`unknown field "${extra}"`);
  if (typeof input.client_message_id !== 'string' || !isUuid(input.client_message_id))
    throw invalid('client_message_id must be a UUID');
  if (!Array.isArray(input.blocks) || input.blocks.length === 0)
    throw invalid('blocks must hold at least one block');
  if (input.blocks.length > limits.maxBlocks) throw tooLarge(messageTooLarge(input.blocks, limits)!);
  const blocks = input.blocks.map((block, i) => readSendBlock(block, i));
  if (blocks.length > 1 && blocks.some((b) => b.type === 'postback'))
    throw invalid('a postback is the only block of its message');
  const breach = messageTooLarge(blocks, limits);
  if (breach) throw tooLarge(breach);
  return { version: ENVELOPE_VERSION, client_message_id: input.client_message_id.toLowerCase(), blocks };
}

/**
 * Checks a client publication against the VisitorTyping schema (docs/asyncapi.yaml): exactly
 * `{"version":1,"event":"typing"}`; refused with the same codes as a SendMessage (401 version, 400 shape).
 */
export function parseVisitorTyping(data: unknown): VisitorTyping {
  const input = data as Record<string, unknown>;
  if (input.version !== ENVELOPE_VERSION) {
    throw new PublishRefusal(
      PUBLISH_CODES.unsupportedVersion,
      `unsupported publication version (this server speaks ${ENVELOPE_VERSION})`,
    );
  }
  if (input.event !== 'typing')
    throw new PublishRefusal(PUBLISH_CODES.invalidMessage, 'invalid publication: event must be "typing"');
  const extra = unknownFieldOf(input, TYPING_FIELDS);
  if (extra !== undefined)
    throw new PublishRefusal(PUBLISH_CODES.invalidMessage, `invalid VisitorTyping: unknown field "${extra}"`);
  return { version: ENVELOPE_VERSION, event: 'typing' };
}

/**
 * One block of a SendMessage: non-empty markdown, an attachment of the conversation by id, or a postback
 * `{type, option_id, label}` (docs/asyncapi.yaml).
 */
function readSendBlock(block: unknown, i: number): SendMessageBlock {
  if (block === null || typeof block !== 'object' || Array.isArray(block))
    throw invalid(`blocks[${i}] must be an object`);
  const b = block as Record<string, unknown>;
  if (b.type === 'attachment') return attachmentBlockOf(b, i);
  if (b.type === 'postback') return readPostback(b, i);
  if (b.type !== 'markdown')
    throw invalid(`blocks[${i}].type must be "markdown", "attachment" or "postback"`);
  if (typeof b.content !== 'string' || b.content.trim().length === 0)
    throw invalid(`blocks[${i}].content must be non-empty text`);
  const extra = unknownFieldOf(b, MARKDOWN_FIELDS);
  if (extra !== undefined) throw invalid(`blocks[${i}] has unknown field "${extra}"`);
  return { type: 'markdown', content: b.content };
}

/**
 * A postback's shape only; whether its option is offered is the conversation's question (interactive/postbacks.ts).
 * The client's `label` is checked like an offered one but never stored: the server takes the offer's.
 */
function readPostback(b: Record<string, unknown>, i: number): SendMessageBlock {
  const extra = unknownFieldOf(b, POSTBACK_FIELDS);
  if (extra !== undefined) throw invalid(`blocks[${i}] has unknown field "${extra}"`);
  if (!isBoundedText(b.option_id, INTERACTIVE_LIMITS.idLength))
    throw invalid(
      `blocks[${i}].option_id must be non-empty text of at most ${INTERACTIVE_LIMITS.idLength} characters`,
    );
  if (!isBoundedText(b.label, INTERACTIVE_LIMITS.labelLength))
    throw invalid(
      `blocks[${i}].label must be non-empty text of at most ${INTERACTIVE_LIMITS.labelLength} characters`,
    );
  return { type: 'postback', option_id: b.option_id, label: b.label };
}

/** The members each publication and block may have (docs/asyncapi.yaml): any other is refused, not ignored. */
const SEND_MESSAGE_FIELDS = ['version', 'client_message_id', 'blocks'];
const TYPING_FIELDS = ['version', 'event'];
const MARKDOWN_FIELDS = ['type', 'content'];
const ATTACHMENT_FIELDS = ['type', 'attachment_id'];
const POSTBACK_FIELDS = ['type', 'option_id', 'label'];

/** The first member of `input` not in `allowed`, if any. */
const unknownFieldOf = (input: object, allowed: readonly string[]): string | undefined =>
  Object.keys(input).find((key) => !allowed.includes(key));

const isBoundedText = (value: unknown, max: number): value is string =>
  typeof value === 'string' && value.trim().length > 0 && value.length <= max;
