/** Where the realtime engine accepts WebSocket upgrades, on the same host and port as the REST API. */
export const WEBSOCKET_PATH = '/connection/websocket';

/**
 * The fallbacks when a WebSocket cannot be opened (Centrifugo's bidirectional emulation), on the same host and port:
 * an HTTP-streaming or SSE response carries the server's frames, and the client posts its commands to
 * `EMULATION_PATH`.
 */
export const HTTP_STREAM_PATH = '/connection/http_stream';
export const SSE_PATH = '/connection/sse';
export const EMULATION_PATH = '/emulation';

/**
 * The realtime namespace of every conversation channel: its history (100 publications for 1 hour, with recovery)
 * and its publish permission are configured on this name.
 */
export const MESSAGES_NAMESPACE_NAME = 'messages';

/** The ids a conversation channel names. */
export interface ChannelAddress {
  companyId: string;
  conversationId: string;
}

const CHANNEL_PREFIX = `${MESSAGES_NAMESPACE_NAME}:companies.`;
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const CHANNEL_RE = new RegExp(
  `^${MESSAGES_NAMESPACE_NAME}:companies\\.(${UUID})\\.conversations\\.(${UUID})$`,
);

/**
 * The realtime channel of a conversation (spec "Conversation channel address"):
 * `messages:companies.{companyId}.conversations.{conversationId}`.
 *
 * @example
 * ```ts
 * channelOf(companyId, conversationId); // `messages:companies.${companyId}.conversations.${conversationId}`
 * ```
 */
export const channelOf = (companyId: string, conversationId: string): string =>
  `${CHANNEL_PREFIX}${companyId}.conversations.${conversationId}`;

/**
 * The company and conversation a channel name addresses, or `undefined` for anything that is not a conversation
 * channel (another namespace, ids that are not lowercase UUIDs, extra segments).
 *
 * @example
 * ```ts
 * parseChannel(channelOf(companyId, conversationId)); // { companyId, conversationId }
 * parseChannel('news:general'); // undefined
 * ```
 */
export function parseChannel(channel: string): ChannelAddress | undefined {
  const match = CHANNEL_RE.exec(channel);
  return match ? { companyId: match[1]!, conversationId: match[2]! } : undefined;
}
