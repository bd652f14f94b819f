import { randomUUID } from 'node:crypto';
import type { Scope } from '@parley/server/internal/oauth/principal';
import type { MessageEnvelope } from '@parley/server/internal/webchat/messages/message';
import { type ReadEvent, readEventOf } from '@parley/webchat-protocol';
import { Centrifuge, type Subscription } from 'centrifuge';
import WebSocket from 'ws';
import { http, json } from '../http-client.ts';
import { createTestClient, fetchToken } from '../oauth/oauth-fixtures.ts';
import type { TestServer } from '../test-server.ts';
import { waitForSettled } from '../wait.ts';

/** A visitor as the SDK sees it: one X-Session-Id in one company (optionally one channel). */
export interface Visitor {
  sessionId: string;
  companyId: string;
  channelId?: string;
  headers: Record<string, string>;
}

export function newVisitor(
  companyId: string,
  options: { channelId?: string; sessionId?: string; origin?: string } = {},
): Visitor {
  const sessionId = options.sessionId ?? randomUUID();
  const headers: Record<string, string> = { 'x-session-id': sessionId, 'x-company': companyId };
  if (options.channelId) headers['x-channel-id'] = options.channelId;
  if (options.origin) headers.origin = options.origin;
  return { sessionId, companyId, channelId: options.channelId, headers };
}

export const sdkPost = (server: TestServer, v: Visitor, path: string, body: unknown = {}) =>
  http(`${server.baseUrl}/sdk/v1${path}`, json(body, v.headers));

export const sdkGet = (server: TestServer, v: Visitor, path: string) =>
  http(`${server.baseUrl}/sdk/v1${path}`, { headers: v.headers });

export async function createConversation(
  server: TestServer,
  v: Visitor,
): Promise<{ id: string; channel: string }> {
  const res = await sdkPost(server, v, '/conversations');
  if (res.status !== 201) throw new Error(`create conversation: ${res.status} ${res.text}`);
  return res.body;
}

/** Collects every envelope a subscription receives, with helpers to wait for a condition. */
export class EnvelopeLog {
  readonly envelopes: MessageEnvelope[] = [];
  private waiters: Array<() => void> = [];

  push(envelope: MessageEnvelope): void {
    this.envelopes.push(envelope);
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Waits (bounded) until `predicate` holds over the log. */
  async waitFor(
    predicate: (envelopes: MessageEnvelope[]) => boolean,
    timeoutMs = 15_000,
    what = 'envelopes',
  ): Promise<MessageEnvelope[]> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.envelopes)) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.envelopes.map(summary))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 250));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.envelopes;
  }

  of(messageId: string): MessageEnvelope[] {
    return this.envelopes.filter((e) => e.message_snapshot.id === messageId);
  }

  completed(role?: string): MessageEnvelope[] {
    return this.envelopes.filter(
      (e) => e.operation === 'complete' && (!role || e.message_snapshot.role === role),
    );
  }
}

const summary = (e: MessageEnvelope) => `${e.message_snapshot.role}:${e.operation}:${e.sequence}`;

export interface ConnectedVisitor {
  client: Centrifuge;
  sub: Subscription;
  log: EnvelopeLog;
  /** The stream position the client holds (from `subscribed` and each publication's offset), for recovery. */
  position: { offset: number; epoch: string };
  /** The `data` of every subscribe result so far (the replies in flight: packages/server/src/webchat/realtime/in-flight.ts). */
  subscribedData: unknown[];
  /** Read events received (live, outside history; packages/server/src/webchat/reads/read-marks.ts): not envelopes, so not in `log`. */
  readEvents: ReadEvent[];
  close(): void;
}

/**
 * The spec's setup order with the real `centrifuge` client: connect-token → connect → subscribe with a
 * getToken that calls subscribe-token. Resolves once subscribed.
 */
export async function connectVisitor(
  server: TestServer,
  v: Visitor,
  conversation: { id: string; channel: string },
  options: { origin?: string } = {},
): Promise<ConnectedVisitor> {
  const tokenRes = await sdkPost(server, v, '/auth/connect-token');
  if (tokenRes.status !== 200) throw new Error(`connect-token: ${tokenRes.status} ${tokenRes.text}`);
  const wsUrl = `${server.baseUrl.replace(/^http/, 'ws')}/connection/websocket`;
  const Socket = options.origin
    ? class extends WebSocket {
        constructor(url: string, protocols?: string | string[]) {
          super(url, protocols, { origin: options.origin });
        }
      }
    : WebSocket;
  const client = new Centrifuge(wsUrl, {
    websocket: Socket,
    token: tokenRes.body.connection_token,
    timeout: 10_000,
  });
  const log = new EnvelopeLog();
  const sub = client.newSubscription(conversation.channel, {
    getToken: async () => {
      const res = await sdkPost(server, v, '/auth/subscribe-token', { conversation_id: conversation.id });
      if (res.status !== 200) throw new Error(`subscribe-token: ${res.status}`);
      return res.body.subscription_token;
    },
  });
  const position = { offset: 0, epoch: '' };
  const subscribedData: unknown[] = [];
  sub.on('subscribed', (ctx) => {
    if (ctx.streamPosition) Object.assign(position, ctx.streamPosition);
    subscribedData.push(ctx.data);
  });
  const readEvents: ReadEvent[] = [];
  sub.on('publication', (ctx) => {
    if (ctx.offset !== undefined) position.offset = ctx.offset;
    const read = readEventOf(ctx.data);
    if (read) readEvents.push(read);
    else log.push(ctx.data as MessageEnvelope);
  });
  client.connect();
  sub.subscribe();
  try {
    await waitForSettled(sub.ready(), 15_000, 'subscribe');
  } catch (error) {
    // A client left behind keeps reconnecting after the server has closed, and its timers keep the test file's
    // process alive long after the failure (the cause of a run that once hung for minutes).
    client.disconnect();
    throw error;
  }
  return { client, sub, log, position, subscribedData, readEvents, close: () => client.disconnect() };
}

export function sendMessage(sub: Subscription, content: string, clientMessageId: string = randomUUID()) {
  return sub.publish({
    version: 1,
    client_message_id: clientMessageId,
    blocks: [{ type: 'markdown', content }],
  });
}

/** A long, deterministic builtin reply: `words` words, one every `delayMs` (a real builtin digital employee). */
export async function createSlowEmployee(
  server: TestServer,
  companyId: string,
  options: { words?: number; delayMs?: number; name?: string } = {},
) {
  const fallback = slowEmployeeText(options.words ?? 30);
  return server.ctx.digitalEmployees.create({
    companyId,
    name: options.name ?? 'Slowpoke',
    responder: 'builtin',
    settings: { fallback, word_delay_ms: options.delayMs ?? 100, greeting: null },
  });
}

/** A new company whose default digital employee is a `createSlowEmployee` (the set-up most reply tests start from). */
export async function createCompanyWithSlowEmployee(
  server: TestServer,
  name: string,
  options: { words?: number; delayMs?: number } = {},
) {
  const company = await server.ctx.companies.create(name);
  const employee = await createSlowEmployee(server, company.id, options);
  await server.ctx.digitalEmployees.setDefault(company.id, employee.id);
  return { company, employee };
}

/** A bearer token for the platform API (real API client + the client-credentials token endpoint). */
export async function fetchPlatformToken(
  server: TestServer,
  companyId: string,
  scopes: Scope[],
): Promise<string> {
  return fetchToken(server, await createTestClient(server.ctx, scopes, companyId), scopes.join(' '));
}

export const bearer = (token: string, body?: unknown): RequestInit =>
  body === undefined
    ? { headers: { authorization: `Bearer ${token}` } }
    : {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      };

/** A fresh visitor's conversation with a connected, subscribed client: the setup most webchat tests start from. */
export async function connectToNewConversation(
  server: TestServer,
  v: Visitor,
): Promise<{ conversation: { id: string; channel: string }; c: ConnectedVisitor }> {
  const conversation = await createConversation(server, v);
  const c = await connectVisitor(server, v, conversation);
  return { conversation, c };
}

/** A channel of `companyId` answered by `digitalEmployeeId`, inserted directly (no channel API needed). */
export async function createChannelWithEmployee(
  server: TestServer,
  companyId: string,
  digitalEmployeeId: string,
  name = 'slow',
): Promise<string> {
  const { id } = await server.ctx.store.db
    .insertInto('channels')
    .values({
      id: randomUUID(),
      company_id: companyId,
      name,
      digital_employee_id: digitalEmployeeId,
      allowed_origins: '[]',
      created_at: new Date().toISOString(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

/** The `complete` envelopes of digital-employee replies, in arrival order. */
export const digitalEmployeeCompletes = (envelopes: MessageEnvelope[]): MessageEnvelope[] =>
  envelopes.filter((x) => x.message_snapshot.role === 'digital_employee' && x.operation === 'complete');

/** True once a digital-employee reply is streaming (past its typing envelope). */
export const replyIsStreaming = (envelopes: MessageEnvelope[]): boolean =>
  envelopes.some((x) => x.message_snapshot.role === 'digital_employee' && x.sequence >= 2);

/** The exact text `slowEmployee` streams for `words` words. */
export const slowEmployeeText = (words: number): string =>
  Array.from({ length: words }, (_, i) => `word${i + 1}`).join(' ');

/** The REST message history of one conversation as the visitor reads it (`query` e.g. `?limit=2`). */
export const listMessages = (server: TestServer, v: Visitor, conversationId: string, query = '') =>
  sdkGet(server, v, `/conversations/${conversationId}/messages${query}`);

/** A bare `centrifuge` client on the server's WebSocket endpoint (not connected yet), for refusal tests. */
export function newCentrifugeClient(
  server: TestServer,
  token: string,
  websocket: new (url: string, protocols?: string | string[]) => WebSocket = WebSocket,
): Centrifuge {
  return new Centrifuge(`${server.baseUrl.replace('http', 'ws')}/connection/websocket`, {
    websocket,
    token,
    timeout: 10_000,
  });
}
