/** How big one message may be, whoever writes it (visitor, agent, CLI): `PARLEY_WEBCHAT_MAX_*` (docs/config.md). */
export interface MessageLimits {
  maxMessageBytes: number;
  maxBlocks: number;
}

/**
 * The one size rule of messages: at most `maxBlocks` blocks (attachments count) and `maxMessageBytes` bytes of text
 * over all blocks (markdown content, and the labels, titles, texts and URLs of interactive blocks; an attachment
 * block has none). Returns why a message breaks it (safe to show), or `undefined`. Each boundary reports it its own
 * way: a refused publish (413) for visitors, the `message_too_large` problem for agents.
 */
export function messageTooLarge(blocks: ReadonlyArray<object>, limits: MessageLimits): string | undefined {
  if (blocks.length > limits.maxBlocks) return `A message holds at most ${limits.maxBlocks} blocks.`;
  const bytes = blocks.reduce((n, b) => n + textBytes(b), 0);
  if (bytes > limits.maxMessageBytes)
    return `A message holds at most ${limits.maxMessageBytes} bytes of text.`;
  return undefined;
}

/** Keys whose strings are names the server or the protocol chose, not text a person wrote. */
const NOT_TEXT = new Set(['type', 'id', 'attachment_id']);

/** UTF-8 bytes of every string a block holds, but its names (NOT_TEXT). */
function textBytes(value: unknown, key?: string): number {
  if (typeof value === 'string') return key !== undefined && NOT_TEXT.has(key) ? 0 : Buffer.byteLength(value);
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + textBytes(v), 0);
  if (value !== null && typeof value === 'object')
    return Object.entries(value).reduce((n, [k, v]) => n + textBytes(v, k), 0);
  return 0;
}
