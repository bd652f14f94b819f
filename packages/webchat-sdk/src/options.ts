import type { RealtimeTransport } from './events.ts';
import type { FetchLike } from './rest-client.ts';
import type { KeyValueStorage } from './session-storage.ts';
import type { GetVisitorToken } from './visitor-tokens.ts';

/** Options of {@link createWebchat}. Only `baseUrl` and `companyId` are required. */
export interface WebchatOptions {
  /** Where Parley runs, e.g. `https://chat.example.com`. */
  baseUrl: string;
  /** Company id from the company settings of the platform (`X-Company`). */
  companyId: string;
  /** Channel id (`X-Channel-Id`): keeps this widget's conversations apart from other channels'. */
  channelId?: string;
  /**
   * A verified visitor's token (`X-Visitor-Token`), signed by your backend with the channel's identity secret: the
   * visitor then sees their conversations on every device. Needs `channelId`.
   */
  visitorToken?: string;
  /**
   * Returns the visitor's token (or `null` while anonymous). Called before the first REST call, again when the
   * cached token is about to expire (its `exp`), and when the server refuses it (`visitor_token_invalid`).
   */
  getVisitorToken?: GetVisitorToken;
  /**
   * What agents should know about the visitor (e.g. `{ plan: 'gold', orders: 3 }`): at most 20 string, number or
   * boolean values, keys ≤ 64 characters, values ≤ 256. Sent when a conversation starts, shown in the agents' inbox
   * and filterable there. A verified visitor token's own `attributes` claim wins.
   */
  attributes?: Record<string, string | number | boolean>;
  /**
   * Ask for the connection and subscription tokens with a new conversation (`realtime_tokens: true`), so opening a
   * chat takes one request instead of three. Off by default: the SDK then runs the spec's setup order with a request
   * for each token (create → connect-token → connect → subscribe-token → subscribe). Renewals always ask the server.
   */
  tokensWithConversation?: boolean;
  /** Where the session id and the current conversation persist. Default: localStorage, else memory. */
  storage?: KeyValueStorage;
  /** WebSocket constructor where there is no global one (Node 20: `import WebSocket from 'ws'`). */
  websocket?: unknown;
  /** fetch implementation; default: the global `fetch`. */
  fetch?: FetchLike;
  /** Realtime endpoint; default: discovered from `GET /sdk/v1/config`. */
  realtimeUrl?: string;
  /**
   * Which realtime transports to try, in order, when connecting: a WebSocket first and, where a proxy or firewall
   * blocks it, HTTP-streaming, then server-sent events (Centrifugo's bidirectional emulation). Once one has worked it
   * is kept for the session's reconnects. The one in use is {@link Webchat.transport}. Default: all three, in that
   * order.
   */
  transports?: RealtimeTransport[];
  /**
   * Fallback endpoints; default: discovered from `GET /sdk/v1/config`, else derived from `baseUrl`
   * (`/connection/http_stream`, `/connection/sse`, `/emulation`).
   */
  httpStreamUrl?: string;
  sseUrl?: string;
  emulationUrl?: string;
  /** Open this conversation instead of resuming the last one. */
  conversationId?: string;
  /** Start a new conversation even if one could be resumed. */
  newConversation?: boolean;
  /** Messages per REST page (initial load, `loadOlder`, reconciliation). Default 50. */
  pageSize?: number;
  /**
   * Publish attempts per message before it is marked `failed`, however short the outage. Default: no limit (the
   * retry window decides).
   */
  maxSendAttempts?: number;
  /**
   * First delay before re-publishing after a temporary error (the server's 503 while its database or broker is
   * down, a time-out, a dropped connection), in ms; it doubles with each attempt up to 15 s. Default 1000.
   */
  sendRetryDelayMs?: number;
  /**
   * How long a message keeps being retried after its first temporary failure before it is marked `failed`, in ms.
   * Every attempt carries the same `client_message_id`, so the server stores it once. Default 120000.
   */
  sendRetryWindowMs?: number;
  /** How long `start()` waits for the first subscription before rejecting, in ms. Default 30000. */
  startTimeoutMs?: number;
  /**
   * Tuning passed to the centrifuge client (reconnect delays, timeouts), and the `fetch`, `readableStream` and
   * `eventsource` implementations the fallback transports need where there are no global ones (Node 20 has no
   * `EventSource`, so SSE is skipped there unless one is given).
   */
  centrifuge?: CentrifugeTuning;
}

/**
 * The centrifuge client options the SDK passes through (the realtime client is bundled into the SDK, so its own
 * types are not needed to use it). Delays in ms.
 */
export interface CentrifugeTuning {
  minReconnectDelay?: number;
  maxReconnectDelay?: number;
  /** Time-out of a command (connect, subscribe, publish), in ms. */
  timeout?: number;
  maxServerPingDelay?: number;
  debug?: boolean;
  /** For the HTTP-streaming and SSE fallbacks where there is no global `fetch`. */
  fetch?: unknown;
  /** For the HTTP-streaming fallback where there is no global `ReadableStream`. */
  readableStream?: unknown;
  /** For the SSE fallback where there is no global `EventSource` (Node 20). */
  eventsource?: unknown;
}
