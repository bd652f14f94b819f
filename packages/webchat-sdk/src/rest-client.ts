import { WebchatError } from './errors.ts';
import type { Conversation, MessageSnapshot } from './wire.ts';

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface RestClientOptions {
  baseUrl: string;
  companyId: string;
  channelId?: string;
  sessionId: string;
  fetch?: FetchLike;
}

/**
 * The webchat REST API (`/sdk/v1`, DESIGN.md "Webchat REST"). Every call carries the session context headers the
 * spec requires: `X-Session-Id`, `X-Company` and, when configured, `X-Channel-Id`.
 */
export class RestClient {
  private readonly baseUrl: string;
  private readonly headers: Record<string, string>;
  private readonly fetchFn: FetchLike;

  constructor(options: RestClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.headers = { 'X-Session-Id': options.sessionId, 'X-Company': options.companyId };
    if (options.channelId) this.headers['X-Channel-Id'] = options.channelId;
    this.fetchFn = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  async config(): Promise<{ realtime_url: string }> {
    const body = await this.request<{ realtime_url?: unknown }>('GET', '/sdk/v1/config');
    if (typeof body.realtime_url !== 'string') throw invalid('config has no realtime_url');
    return { realtime_url: body.realtime_url };
  }

  async createConversation(): Promise<Conversation> {
    const body = await this.request<Conversation>('POST', '/sdk/v1/conversations', {});
    return checkConversation(body);
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
    const body = await this.request<{ subscription_token?: unknown; expires_in?: unknown }>(
      'POST',
      '/sdk/v1/auth/subscribe-token',
      { conversation_id: conversationId },
    );
    if (typeof body.subscription_token !== 'string')
      throw invalid('subscribe-token answer has no subscription_token');
    return { token: body.subscription_token, expiresIn: Number(body.expires_in ?? 0) };
  }

  private async request<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { ...this.headers, Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response: Response;
    try {
      response = await this.fetchFn(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (cause) {
      throw new WebchatError('network_error', `${method} ${path} could not reach the server`, { cause });
    }
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

function checkConversation(value: Conversation): Conversation {
  if (!value || typeof value.id !== 'string' || typeof value.channel !== 'string') {
    throw invalid('conversation without id or channel');
  }
  return value;
}
