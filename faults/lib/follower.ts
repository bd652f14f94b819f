// A second client of a visitor's conversation, on a node of the scenario's choosing: the same session (so the
// same `sub`), its own WebSocket straight to that node. It only listens, and records what it was shown and when,
// and every resubscription the engine asked for (unsubscribe 2500: "insufficient state, recover").

import { waitForSettled } from '@parley/testing/wait';
import { channelOf } from '@parley/webchat-protocol';
import { Centrifuge, type Subscription } from 'centrifuge';
import WebSocket from 'ws';
import { ClientView } from './client-view.ts';
import { retrySdkCall, type SdkSession } from './rest.ts';

export interface Resubscription {
  at: number;
  code: number;
  /** Filled in once subscribed again: whether the engine recovered the gap from history. */
  recovered?: boolean;
}

export class Follower {
  readonly view = new ClientView();
  readonly resubscriptions: Resubscription[] = [];
  private client: Centrifuge | null = null;
  private subscription: Subscription | null = null;

  constructor(
    readonly label: string,
    private readonly session: SdkSession,
    private readonly conversationId: string,
  ) {}

  async start(timeoutMs = 30_000): Promise<void> {
    const { session, conversationId } = this;
    const client = new Centrifuge(`${session.baseUrl.replace(/^http/, 'ws')}/connection/websocket`, {
      websocket: WebSocket,
      getToken: async () =>
        (
          await retrySdkCall<{ connection_token: string }>(
            session,
            'POST',
            '/auth/connect-token',
            {},
            200,
            5_000,
          )
        ).connection_token,
      timeout: 5_000,
      minReconnectDelay: 200,
      maxReconnectDelay: 5_000,
    });
    const subscription = client.newSubscription(channelOf(session.companyId, conversationId), {
      getToken: async () =>
        (
          await retrySdkCall<{ subscription_token: string }>(
            session,
            'POST',
            '/auth/subscribe-token',
            { conversation_id: conversationId },
            200,
            5_000,
          )
        ).subscription_token,
    });
    subscription.on('publication', (ctx) => this.view.applyEnvelope(ctx.data));
    subscription.on('subscribing', (ctx) => {
      if (ctx.code >= 2500 && ctx.code < 3000) this.resubscriptions.push({ at: Date.now(), code: ctx.code });
    });
    subscription.on('subscribed', (ctx) => {
      const last = this.resubscriptions.at(-1);
      if (ctx.wasRecovering && last && last.recovered === undefined) last.recovered = ctx.recovered;
    });
    client.on('error', () => {
      // retried by the client itself
    });
    this.client = client;
    this.subscription = subscription;
    client.connect();
    subscription.subscribe();
    await waitForSettled(subscription.ready(timeoutMs), timeoutMs + 1_000, `${this.label} subscribed`);
  }

  close(): void {
    this.subscription?.removeAllListeners();
    this.client?.disconnect();
  }
}
