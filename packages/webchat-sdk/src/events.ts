import type { WebchatError } from './errors.ts';
import type { ChatMessage } from './transcript.ts';
import type { Conversation } from './wire.ts';

/**
 * How the webchat reaches the realtime engine: `websocket`, or a fallback for networks that block WebSocket —
 * `http_stream` (a streamed HTTP response) or `sse` (server-sent events); with both fallbacks the visitor's messages
 * go up as plain HTTP requests.
 */
export type RealtimeTransport = 'websocket' | 'http_stream' | 'sse';

/** `connected` means subscribed to the conversation, i.e. messages flow both ways. */
export type ConnectionState = 'connecting' | 'connected' | 'disconnected';

export interface ConnectionChange {
  state: ConnectionState;
  /** Why: a centrifuge code (e.g. 1 "transport closed", 3500 "invalid token") when there is one. */
  code?: number;
  reason?: string;
}

/** Events of a {@link Webchat}; subscribe with `chat.on(name, listener)`. */
export interface WebchatEvents {
  /** A message appeared (a visitor send, a streamed reply's first snapshot, a message loaded over REST). */
  'message:added': (message: ChatMessage) => void;
  /** A message changed (text grew, a send was acknowledged or failed, a typing indicator turned into text). */
  'message:updated': (message: ChatMessage) => void;
  /** A message reached its final state (`complete`); fires once per message. */
  'message:completed': (message: ChatMessage) => void;
  /** After any change: all messages in display order. Convenient for re-rendering. */
  messages: (messages: readonly ChatMessage[]) => void;
  /** The set of messages showing only a typing indicator changed. */
  typing: (change: { typing: boolean; messages: ChatMessage[] }) => void;
  connection: (change: ConnectionChange) => void;
  /** A connection was established over this transport (the first one, or a different one after a fallback). */
  transport: (transport: RealtimeTransport) => void;
  /** A send was given up; the message has status `failed` and can be retried with `retry(message.key)`. */
  'send:failed': (change: { message: ChatMessage; error: WebchatError }) => void;
  /** The open conversation changed (started, resumed, switched). */
  conversation: (conversation: Conversation) => void;
  /** REST reconciliation ran after a reconnect the realtime engine could not recover. */
  reconciled: (change: { added: number; updated: number }) => void;
  /** A background failure that the SDK keeps retrying (token fetch, history load). */
  error: (error: WebchatError) => void;
  /**
   * The open conversation's status or CSAT changed (e.g. an agent closed it: time to ask for a rating). Not fired
   * for a switch to another conversation (that is `conversation`).
   */
  'conversation:updated': (conversation: Conversation) => void;
  /** The number of digital-employee, agent and system messages after the visitor's read mark changed. */
  unread: (change: { count: number }) => void;
  /**
   * An agent has read the conversation up to `position`: the visitor's messages at or below it have been seen
   * (see {@link Webchat.isSeen}).
   */
  seen: (change: { position: number; messageId: string | null }) => void;
}

/** How the parts of a {@link Webchat} tell its listeners: its emitter's `emit`, handed to each part. */
export type Emit = <E extends keyof WebchatEvents>(event: E, ...args: Parameters<WebchatEvents[E]>) => void;
