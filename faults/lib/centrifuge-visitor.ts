// A visitor driving the official `centrifuge` client the documented way: create a conversation, connection token,
// connect, subscription token, subscribe; then SendMessages published on the conversation channel. A publish that
// fails with a temporary or transport error is sent again with the SAME client_message_id (bounded to 60 s), as a
// well-behaved client does; a gap the engine could not recover is read back over REST, as the SDK does.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { waitForSettled } from '@parley/testing/wait';
import type { MessageSnapshot } from '@parley/webchat-sdk';
import { Centrifuge, type Subscription } from 'centrifuge';
import WebSocket from 'ws';
import { ClientView } from './client-view.ts';
import { retrySdkCall, type SdkSession } from './rest.ts';
import { type SendRecord, SendsInFlight, type Visitor, type VisitorRecord } from './visitor.ts';

/** How long one message may be retried before the visitor gives up on it. */
export const SEND_RETRY_WINDOW_MS = 60_000;

/** Pages of 100 read backwards to fill a gap, at most (the SDK's bound is 20 pages as well). */
const MAX_REST_PAGES = 20;

interface PublishError {
  code?: number;
  message?: string;
  temporary?: boolean;
}

/** Temporary server errors and the client's own codes (< 100: timeout, transport closed…) are worth a retry. */
export const isRetryable = (err: PublishError): boolean =>
  err.temporary === true || err.code === undefined || err.code < 100;

/** A `ws` WebSocket that reports the local port of each connection, so the balancer can say which node it is on. */
function trackingWebSocket(onPort: (port: number | undefined) => void) {
  return class TrackedWebSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols);
      this.once('upgrade', (res: IncomingMessage) => onPort(res.socket.localPort));
    }
  };
}

export class CentrifugeVisitor implements Visitor {
  readonly kind = 'centrifuge' as const;
  readonly view = new ClientView();
  readonly sends = new Map<string, SendRecord>();
  /** Local port of the current WebSocket connection (see TcpBalancer.backendOf). */
  localPort: number | undefined;
  recoveryFailures = 0;
  private readonly session: SdkSession;
  private conversation: { id: string; channel: string } | null = null;
  private client: Centrifuge | null = null;
  private subscription: Subscription | null = null;
  private readonly inFlight = new SendsInFlight();
  private closed = false;

  constructor(
    readonly label: string,
    baseUrl: string,
    companyId: string,
  ) {
    this.session = { baseUrl, companyId, sessionId: randomUUID() };
  }

  /** The visitor's session (`X-Session-Id`): another client of the same session may follow its conversation. */
  get sessionId(): string {
    return this.session.sessionId;
  }

  get conversationId(): string {
    if (!this.conversation) throw new Error(`${this.label} has no conversation yet`);
    return this.conversation.id;
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  async start(timeoutMs = 30_000): Promise<void> {
    const conversation = await retrySdkCall<{ id: string; channel: string }>(
      this.session,
      'POST',
      '/conversations',
      {},
      201,
    );
    this.conversation = conversation;
    const client = new Centrifuge(`${this.session.baseUrl.replace(/^http/, 'ws')}/connection/websocket`, {
      websocket: trackingWebSocket((port) => {
        this.localPort = port;
      }),
      getToken: async () =>
        (
          await retrySdkCall<{ connection_token: string }>(
            this.session,
            'POST',
            '/auth/connect-token',
            {},
            200,
            5_000,
          )
        ).connection_token,
      timeout: 5_000,
      // The default backoff grows to 20 s; capped at 5 s the figures measure the server, not the client's patience.
      minReconnectDelay: 200,
      maxReconnectDelay: 5_000,
    });
    const subscription = client.newSubscription(conversation.channel, {
      getToken: async () =>
        (
          await retrySdkCall<{ subscription_token: string }>(
            this.session,
            'POST',
            '/auth/subscribe-token',
            { conversation_id: conversation.id },
            200,
            5_000,
          )
        ).subscription_token,
    });
    subscription.on('publication', (ctx) => this.view.applyEnvelope(ctx.data));
    subscription.on('subscribed', (ctx) => {
      // Recovery fills short gaps; when the engine could not recover, REST is the source of truth.
      if (ctx.wasRecovering && !ctx.recovered) {
        this.recoveryFailures++;
        void this.reconcileFromRest();
      }
    });
    client.on('error', () => {
      // Transport and token errors are retried by the client itself; the figures show what they cost.
    });
    this.client = client;
    this.subscription = subscription;
    client.connect();
    subscription.subscribe();
    await waitForSettled(subscription.ready(timeoutMs), timeoutMs + 1_000, `${this.label} subscribed`);
  }

  /** Sends one message; resolves when it was acknowledged or given up on (never rejects). */
  send(content: string): Promise<void> {
    const record: SendRecord = { clientMessageId: randomUUID(), content, sentAt: Date.now(), attempts: 0 };
    this.sends.set(record.clientMessageId, record);
    return this.inFlight.track(this.publishUntilAcked(record));
  }

  settle(timeoutMs: number): Promise<void> {
    return this.inFlight.settle(timeoutMs, `${this.label} sends`);
  }

  close(): void {
    this.closed = true;
    this.client?.disconnect();
  }

  record(): VisitorRecord {
    return {
      label: this.label,
      kind: this.kind,
      conversationId: this.conversationId,
      sends: [...this.sends.values()],
      view: [...this.view.messages.values()],
      conflictingCompletes: [...this.view.conflictingCompletes],
      recoveryFailures: this.recoveryFailures,
    };
  }

  private async publishUntilAcked(record: SendRecord): Promise<void> {
    const deadline = record.sentAt + SEND_RETRY_WINDOW_MS;
    let pause = 250;
    for (;;) {
      record.attempts++;
      const at = Date.now();
      record.answers ??= [];
      const answers = record.answers;
      try {
        await this.subscription!.publish({
          version: 1,
          client_message_id: record.clientMessageId,
          blocks: [{ type: 'markdown', content: record.content }],
        });
        record.ackedAt = Date.now();
        answers.push({ at, ms: record.ackedAt - at });
        return;
      } catch (raw) {
        const err = raw as PublishError;
        const reason = `${err.code ?? '?'} ${err.message ?? ''}`.trim();
        answers.push({ at, ms: Date.now() - at, error: reason });
        if (!isRetryable(err) || this.closed || Date.now() + pause > deadline) {
          record.gaveUp = reason;
          return;
        }
        record.lastError = reason;
        await sleep(pause);
        pause = Math.min(pause * 2, 2_000);
      }
    }
  }

  /** Reads pages from the newest back until one overlaps what is shown (merge by id), as the SDK does. */
  private async reconcileFromRest(): Promise<void> {
    const conversationId = this.conversationId;
    let before: string | undefined;
    for (let page = 0; page < MAX_REST_PAGES && !this.closed; page++) {
      const query = `?limit=100${before ? `&before=${before}` : ''}`;
      const result = await retrySdkCall<{ messages: MessageSnapshot[]; next_before?: string | null }>(
        this.session,
        'GET',
        `/conversations/${conversationId}/messages${query}`,
        undefined,
        200,
      ).catch(() => null);
      if (!result) return;
      const overlaps = result.messages.some((m) => this.view.messages.has(m.id));
      for (const snapshot of result.messages) this.view.applySnapshot(snapshot);
      before = result.next_before ?? undefined;
      if (overlaps || !before || result.messages.length === 0) return;
    }
  }
}
