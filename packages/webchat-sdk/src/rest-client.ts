import type {
  BusinessHoursStatus,
  CsatView,
  FeedbackRating,
  MessageFeedbackView,
} from '@parley/webchat-protocol';
import { WebchatError } from './errors.ts';
import type { FetchLike } from './fetch-like.ts';
import { type Attachment, sendUpload, type UploadOptions } from './uploads.ts';
import type { VisitorTokens } from './visitor-tokens.ts';
import type { Conversation, MessageSnapshot } from './wire.ts';

export type { FetchLike } from './fetch-like.ts';

/** `GET /sdk/v1/config`: the realtime endpoint and, from servers that offer them, its fallbacks. */
export interface RealtimeConfig {
  realtime_url: string;
  http_stream_url?: string;
  sse_url?: string;
  emulation_url?: string;
  /** Whether the company's agents are in now (business hours) and when they are next; from newer servers. */
  business_hours?: BusinessHoursStatus;
}

/** Business hours as `GET /sdk/v1/config` and `request-human` say them (the protocol's shape). */
export type { BusinessHoursStatus };

export interface RestClientOptions {
  baseUrl: string;
  companyId: string;
  channelId?: string;
  sessionId: string;
  fetch?: FetchLike;
  /** The verified visitor's token, sent as `X-Visitor-Token` on every call. */
  visitorTokens?: VisitorTokens;
  /** The visitor's custom attributes, sent when a conversation starts (docs/design.md "Agent workspace"). */
  attributes?: Record<string, string | number | boolean>;
  /** Ask for both realtime tokens with a new conversation (WebchatOptions.tokensWithConversation). */
  tokensWithConversation?: boolean;
}

/**
 * The webchat REST API (`/sdk/v1`, docs/design.md "Webchat REST"). Every call carries the session context headers the
 * spec requires: `X-Session-Id`, `X-Company` and, when configured, `X-Channel-Id`; and `X-Visitor-Token` for a
 * verified visitor (renewed once through `getVisitorToken` when the server answers `visitor_token_invalid`).
 */
export class RestClient {
  private readonly baseUrl: string;
  private readonly headers: Record<string, string>;
  private readonly fetchFn: FetchLike;
  private readonly visitorTokens: VisitorTokens | undefined;
  private readonly attributes: Record<string, string | number | boolean> | undefined;
  private readonly tokensWithConversation: boolean;
  /**
   * Realtime tokens that came with a new conversation (`realtime_tokens`), each handed out once by `connectToken`
   * and `subscribeToken` instead of a request of its own; renewals always ask the server.
   */
  private connectionToken: FreshToken | undefined;
  private readonly subscriptionTokens = new Map<string, FreshToken>();

  constructor(options: RestClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.tokensWithConversation = options.tokensWithConversation === true;
    this.headers = { 'X-Session-Id': options.sessionId, 'X-Company': options.companyId };
    if (options.channelId) this.headers['X-Channel-Id'] = options.channelId;
    this.fetchFn = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.visitorTokens = options.visitorTokens;
    this.attributes = options.attributes;
  }

  /** Uses another session id from now on (a visitor who signed out starts a fresh anonymous session). */
  setSessionId(sessionId: string): void {
    this.headers['X-Session-Id'] = sessionId;
    this.forgetRealtimeTokens();
  }

  /** Drops tokens kept from a conversation's creation (their `sub` is the old session's or visitor's). */
  forgetRealtimeTokens(): void {
    this.connectionToken = undefined;
    this.subscriptionTokens.clear();
  }

  /**
   * Where the realtime endpoints are. `http_stream_url`, `sse_url` and `emulation_url` (the WebSocket fallbacks) are
   * left out when the server does not name them (an older server).
   */
  async config(): Promise<RealtimeConfig> {
    const body = await this.request<Record<string, unknown>>('GET', '/sdk/v1/config');
    if (typeof body.realtime_url !== 'string') throw invalid('config has no realtime_url');
    const config: RealtimeConfig = { realtime_url: body.realtime_url };
    for (const key of ['http_stream_url', 'sse_url', 'emulation_url'] as const) {
      const value = body[key];
      if (typeof value === 'string') config[key] = value;
    }
    if (isBusinessHours(body.business_hours)) config.business_hours = body.business_hours;
    return config;
  }

  /**
   * Asks for a person: the conversation joins the company queue (`queued_at`), or gets an agent at once. Answers
   * the conversation and whether agents are in.
   */
  async requestHuman(
    conversationId: string,
  ): Promise<Conversation & { business_hours?: BusinessHoursStatus }> {
    const path = `/sdk/v1/conversations/${encodeURIComponent(conversationId)}/request-human`;
    return checkConversation(await this.request<Conversation>('POST', path, {}));
  }

  /**
   * Step 1 of the setup order. With `tokensWithConversation` the conversation comes with the session's connection
   * token and its subscription token (`realtime_tokens: true`), kept for steps 2 and 4, so opening a chat takes one
   * request instead of three; a server that does not send them is asked with connect-token and subscribe-token.
   */
  async createConversation(): Promise<Conversation> {
    const { realtime_tokens: tokens, ...body } = await this.request<
      Conversation & { realtime_tokens?: unknown }
    >('POST', '/sdk/v1/conversations', {
      ...(this.attributes ? { attributes: this.attributes } : {}),
      ...(this.tokensWithConversation ? { realtime_tokens: true } : {}),
    });
    const conversation = checkConversation(body);
    if (isRealtimeTokens(tokens)) {
      const at = Date.now();
      this.connectionToken = freshToken(tokens.connection_token, tokens.connection_expires_in, at);
      this.subscriptionTokens.set(
        conversation.id,
        freshToken(tokens.subscription_token, tokens.subscription_expires_in, at),
      );
    }
    return conversation;
  }

  async getConversation(conversationId: string): Promise<Conversation> {
    const path = `/sdk/v1/conversations/${encodeURIComponent(conversationId)}`;
    return checkConversation(await this.request<Conversation>('GET', path));
  }

  async listConversations(): Promise<Conversation[]> {
    const body = await this.request<{ conversations?: unknown }>('GET', '/sdk/v1/conversations');
    if (!Array.isArray(body.conversations)) throw invalid('conversation list has no conversations array');
    return body.conversations.map((c) => checkConversation(c as Conversation));
  }

  /** One page of messages, oldest first; `nextBefore` is the cursor of the page before it (`null` at the start). */
  async listMessages(
    conversationId: string,
    page: { limit?: number; before?: string } = {},
  ): Promise<{ messages: MessageSnapshot[]; nextBefore: string | null | undefined }> {
    const query = new URLSearchParams();
    if (page.limit !== undefined) query.set('limit', String(page.limit));
    if (page.before !== undefined) query.set('before', page.before);
    const suffix = query.size > 0 ? `?${query}` : '';
    const path = `/sdk/v1/conversations/${encodeURIComponent(conversationId)}/messages${suffix}`;
    const body = await this.request<{ messages?: unknown; next_before?: unknown }>('GET', path);
    if (!Array.isArray(body.messages)) throw invalid('message list has no messages array');
    const nextBefore =
      typeof body.next_before === 'string' ? body.next_before : body.next_before === null ? null : undefined;
    return { messages: body.messages as MessageSnapshot[], nextBefore };
  }

  async connectToken(): Promise<{ token: string; expiresIn: number }> {
    const kept = takeFresh(this.connectionToken);
    this.connectionToken = undefined;
    if (kept) return kept;
    const body = await this.request<{ connection_token?: unknown; expires_in?: unknown }>(
      'POST',
      '/sdk/v1/auth/connect-token',
      {},
    );
    if (typeof body.connection_token !== 'string')
      throw invalid('connect-token answer has no connection_token');
    return { token: body.connection_token, expiresIn: Number(body.expires_in ?? 0) };
  }

  async subscribeToken(conversationId: string): Promise<{ token: string; expiresIn: number }> {
    const kept = takeFresh(this.subscriptionTokens.get(conversationId));
    this.subscriptionTokens.delete(conversationId);
    if (kept) return kept;
    const body = await this.request<{ subscription_token?: unknown; expires_in?: unknown }>(
      'POST',
      '/sdk/v1/auth/subscribe-token',
      { conversation_id: conversationId },
    );
    if (typeof body.subscription_token !== 'string')
      throw invalid('subscribe-token answer has no subscription_token');
    return { token: body.subscription_token, expiresIn: Number(body.expires_in ?? 0) };
  }

  /** The visitor's thumb on a digital-employee or agent message; rating again replaces it. */
  async rateMessage(
    conversationId: string,
    messageId: string,
    rating: FeedbackRating,
    comment?: string | null,
  ): Promise<MessageFeedbackView> {
    const path = `/sdk/v1/conversations/${encodeURIComponent(conversationId)}/messages/${encodeURIComponent(messageId)}/feedback`;
    return this.request<MessageFeedbackView>('PUT', path, {
      rating,
      ...(comment != null ? { comment } : {}),
    });
  }

  /** The visitor's satisfaction (1–5) with a closed conversation. */
  async submitCsat(conversationId: string, score: number, comment?: string | null): Promise<CsatView> {
    const path = `/sdk/v1/conversations/${encodeURIComponent(conversationId)}/csat`;
    return this.request<CsatView>('PUT', path, { score, ...(comment != null ? { comment } : {}) });
  }

  /** The visitor has read everything up to `messageId`. */
  async markRead(conversationId: string, messageId: string): Promise<void> {
    const path = `/sdk/v1/conversations/${encodeURIComponent(conversationId)}/read`;
    await this.request<undefined>('POST', path, { message_id: messageId });
  }

  /**
   * Uploads one file to the conversation (`multipart/form-data`, part `file`). The server checks its type from the
   * bytes and its size against the company's limit: a refusal is an `http_error` with `problemCode`
   * `attachment_too_large` (413) or `attachment_type_not_allowed` (415).
   */
  async uploadAttachment(
    conversationId: string,
    file: Blob,
    options: UploadOptions = {},
  ): Promise<Attachment> {
    const path = `/sdk/v1/conversations/${encodeURIComponent(conversationId)}/attachments`;
    const form = new FormData();
    const name = options.name ?? (file as { name?: string }).name ?? 'file';
    form.append('file', file, name);
    const token = await this.visitorTokens?.current();
    const headers: Record<string, string> = { ...this.headers, Accept: 'application/json' };
    if (token !== undefined) headers['X-Visitor-Token'] = token;
    const answer = await sendUpload({
      url: `${this.baseUrl}${path}`,
      headers,
      form,
      options,
      fetchFn: this.fetchFn,
    });
    const response = new Response(answer.text || null, {
      status: answer.status,
      headers: { 'content-type': 'application/json' },
    });
    const uploaded = await this.read<Attachment>('POST', path, response);
    if (typeof uploaded.id !== 'string' || typeof uploaded.url !== 'string')
      throw invalid('the upload answer has no id or url');
    return uploaded;
  }

  private async request<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<T> {
    const token = await this.visitorTokens?.current();
    const response = await this.send(method, path, body, token);
    if (response.status === 401 && this.visitorTokens && token !== undefined) {
      // A token the server refuses (expired, or the secret was rotated): ask for a new one, once.
      const refusal = (await response
        .clone()
        .json()
        .catch(() => undefined)) as { code?: unknown } | undefined;
      const renewed =
        refusal?.code === 'visitor_token_invalid' ? await this.visitorTokens.renew(token) : undefined;
      if (renewed !== undefined)
        return this.read<T>(method, path, await this.send(method, path, body, renewed));
    }
    return this.read<T>(method, path, response);
  }

  private async send(
    method: string,
    path: string,
    body: unknown,
    token: string | undefined,
  ): Promise<Response> {
    const headers: Record<string, string> = { ...this.headers, Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (token !== undefined) headers['X-Visitor-Token'] = token;
    try {
      return await this.fetchFn(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (cause) {
      throw new WebchatError('network_error', `${method} ${path} could not reach the server`, { cause });
    }
  }

  private async read<T>(method: string, path: string, response: Response): Promise<T> {
    const text = await response.text();
    const parsed = parseJson(text);
    if (!response.ok) {
      const problem = (parsed ?? {}) as { code?: unknown; detail?: unknown; title?: unknown };
      const problemCode = typeof problem.code === 'string' ? problem.code : undefined;
      const detail =
        typeof problem.detail === 'string'
          ? problem.detail
          : typeof problem.title === 'string'
            ? problem.title
            : '';
      throw new WebchatError(
        'http_error',
        `${method} ${path} answered ${response.status}${detail ? `: ${detail}` : ''}`,
        {
          status: response.status,
          problemCode,
        },
      );
    }
    if (response.status === 204) return undefined as T;
    if (parsed === undefined || typeof parsed !== 'object' || parsed === null)
      throw invalid(`${path} did not answer JSON`);
    return parsed as T;
  }
}

function parseJson(text: string): unknown {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function invalid(message: string): WebchatError {
  return new WebchatError('invalid_response', message);
}

/** A token kept from a conversation's creation, usable until half its lifetime has passed. */
interface FreshToken {
  token: string;
  expiresIn: number;
  usableUntil: number;
}

const freshToken = (token: string, expiresIn: number, at: number): FreshToken => ({
  token,
  expiresIn,
  usableUntil: at + (expiresIn * 1000) / 2,
});

/**
 * A kept token, unless it is too old to hand to centrifuge: it asks again only when a token nears its expiry, so
 * one past half its lifetime is left to a request of its own.
 */
function takeFresh(kept: FreshToken | undefined): { token: string; expiresIn: number } | undefined {
  if (!kept || Date.now() > kept.usableUntil) return undefined;
  return { token: kept.token, expiresIn: kept.expiresIn };
}

interface RealtimeTokens {
  connection_token: string;
  connection_expires_in: number;
  subscription_token: string;
  subscription_expires_in: number;
}

function isRealtimeTokens(value: unknown): value is RealtimeTokens {
  const v = value as Partial<RealtimeTokens> | null | undefined;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.connection_token === 'string' &&
    typeof v.subscription_token === 'string' &&
    typeof v.connection_expires_in === 'number' &&
    typeof v.subscription_expires_in === 'number'
  );
}

function checkConversation(value: Conversation): Conversation {
  if (!value || typeof value.id !== 'string' || typeof value.channel !== 'string') {
    throw invalid('conversation without id or channel');
  }
  return value;
}

const isBusinessHours = (value: unknown): value is BusinessHoursStatus =>
  typeof value === 'object' && value !== null && typeof (value as { open?: unknown }).open === 'boolean';
