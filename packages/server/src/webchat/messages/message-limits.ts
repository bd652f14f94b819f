/** How big one message may be, whoever writes it (visitor, agent, CLI): `PARLEY_WEBCHAT_MAX_*` (docs/config.md). */
export interface MessageLimits {
  maxMessageBytes: number;
  maxBlocks: number;
}

/**
 * The one size rule of messages: at most `maxBlocks` blocks (attachments count) and `maxMessageBytes` bytes of
 * text over all blocks (an attachment block has none).
 * Returns why a message breaks it (safe to show), or `undefined`. Each boundary reports it its own way: a refused
 * publish (413) for visitors, the `message_too_large` problem for agents.
 */
export function messageTooLarge(
  blocks: ReadonlyArray<{ type: string; content?: string } | { type: string }>,
  limits: MessageLimits,
): string | undefined {
  if (blocks.length > limits.maxBlocks) return `A message holds at most ${limits.maxBlocks} blocks.`;
  const bytes = blocks.reduce((n, b) => n + ('content' in b ? Buffer.byteLength(b.content ?? '') : 0), 0);
  if (bytes > limits.maxMessageBytes)
    return `A message holds at most ${limits.maxMessageBytes} bytes of text.`;
  return undefined;
}
