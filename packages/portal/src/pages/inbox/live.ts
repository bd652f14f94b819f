import {
  acceptsEnvelope,
  type InboxPublication,
  type NoteView,
  type ReceivedSnapshot,
  readEnvelope,
} from '@parley/webchat-protocol';
import type { RealtimeGrantView } from '@parley/wire-types';
import { Centrifuge, type Subscription } from 'centrifuge';
import { api } from '../../api.ts';
import type { ConversationView } from './model.ts';

/**
 * A subscription to the channel a grant names, on the page's one client; when its token expires a fresh grant
 * renews it (the inbox channel and a transcript's channel alike).
 */
const subscribeGranted = (
  client: Centrifuge,
  g: RealtimeGrantView,
  grant: () => Promise<RealtimeGrantView>,
): Subscription =>
  client.newSubscription(g.channel, {
    token: g.subscription_token,
    getToken: async () => (await grant()).subscription_token,
  });

export interface InboxLiveHandlers {
  /** A conversation's new entry (docs/routing.md "Live inbox"). */
  onConversation(c: ConversationView): void;
  onVisitorTyping(conversationId: string): void;
  /** A note written in one of the company's conversations (docs/asyncapi.yaml "InboxNote"): agents only. */
  onNote(note: NoteView): void;
  /** The inbox channel is (or is no longer) subscribed. */
  onInboxLive(live: boolean): void;
  /** Why the page's connection is down now, or undefined once it is back. */
  onTrouble(why: string | undefined): void;
}

export interface ConversationLiveHandlers {
  onMessage(m: ReceivedSnapshot, complete: boolean): void;
  onLive(): void;
  onOff(why: string): void;
}

/**
 * The page's one realtime client: the company's inbox channel (every change of a conversation arrives as its new
 * entry; no polling) and at most one conversation channel, whose envelopes are filtered by sequence as the
 * protocol says (replace → complete, older sequences dropped).
 */
export class InboxLive {
  private client: Centrifuge | undefined;
  private ready: Promise<Centrifuge | Error>;
  private resolveReady!: (c: Centrifuge | Error) => void;
  private current: Subscription | undefined;
  trouble: string | undefined;

  constructor(private readonly h: InboxLiveHandlers) {
    this.ready = new Promise((resolve) => {
      this.resolveReady = resolve;
    });
  }

  async start(): Promise<void> {
    const grant = () => api<RealtimeGrantView>('POST', '/inbox/realtime');
    const g = await grant().catch((err: unknown) => {
      this.resolveReady(err instanceof Error ? err : new Error('request failed'));
      throw err;
    });
    const client = new Centrifuge(g.websocket_url, {
      token: g.connection_token,
      getToken: async () => (await grant()).connection_token,
    });
    const sub = subscribeGranted(client, g, grant);
    sub.on('publication', (ctx) => {
      const event = ctx.data as InboxPublication;
      if (event?.version !== 1) return;
      if ('event' in event) {
        if (event.event === 'visitor_typing') this.h.onVisitorTyping(event.conversation_id);
        // Notes never travel on the conversation channel (the visitor reads that one), only on this one.
        else if (event.event === 'note') this.h.onNote(event.note);
      } else if (event.type === 'conversation') this.h.onConversation(event.conversation as ConversationView);
    });
    sub.on('subscribed', () => this.h.onInboxLive(true));
    sub.on('unsubscribed', () => this.h.onInboxLive(false));
    // Code 0 is the client's own doing (first connect); any other code is the server's (3000–4999, e.g. 4503 origin
    // refused) or the network's (1 transport closed).
    client.on('connecting', ({ code, reason }) => {
      this.h.onInboxLive(false);
      if (code !== 0) this.setTrouble(`the connection was lost (${code} ${reason}); reconnecting…`);
    });
    client.on('connected', () => this.setTrouble(undefined));
    client.on('disconnected', ({ code, reason }) => {
      this.h.onInboxLive(false);
      if (code !== 0)
        this.setTrouble(`the connection was refused (${code} ${reason}). Reload the page to try again.`);
    });
    client.connect();
    sub.subscribe();
    this.client = client;
    this.resolveReady(client);
  }

  private setTrouble(why: string | undefined): void {
    this.trouble = why;
    this.h.onTrouble(why);
  }

  /** Follows one conversation (the previous one stops); `stillWanted` guards against a pane replaced meanwhile. */
  async follow(
    conversationId: string,
    h: ConversationLiveHandlers,
    stillWanted: () => boolean,
  ): Promise<void> {
    const grant = () => api<RealtimeGrantView>('POST', `/inbox/conversations/${conversationId}/realtime`);
    let g: RealtimeGrantView;
    let c: Centrifuge | Error;
    try {
      [g, c] = await Promise.all([grant(), this.ready]);
    } catch (err) {
      return h.onOff(`no live access (${err instanceof Error ? err.message : 'request failed'}).`);
    }
    if (c instanceof Error) return h.onOff(`no live access (${c.message}).`);
    if (!stillWanted()) return;
    this.stop();
    const old = c.getSubscription(g.channel);
    old?.unsubscribe();
    if (old) c.removeSubscription(old);
    const sub = subscribeGranted(c, g, grant);
    const sequences = new Map<string, number>();
    const mine = () => this.current === sub;
    sub.on('unsubscribed', ({ code, reason }) => {
      if (code !== 0 && mine())
        h.onOff(`the subscription ended (${code} ${reason}). Reload the page to try again.`);
    });
    sub.on('publication', (ctx) => {
      const { envelope } = readEnvelope(ctx.data);
      if (!envelope) return;
      const id = envelope.message_snapshot.id;
      // Sequences start at 1; a message first seen here counts as seen at 0 (what the transcript was loaded with).
      if (!acceptsEnvelope(sequences.get(id) ?? 0, envelope)) return;
      sequences.set(id, envelope.sequence);
      h.onMessage(envelope.message_snapshot, envelope.operation === 'complete');
    });
    // Guarded: a subscription stopped meanwhile (another conversation opened) must not mark that one live.
    sub.on('subscribed', () => {
      if (mine()) h.onLive();
    });
    sub.subscribe();
    this.current = sub;
    if (this.trouble) h.onOff(this.trouble);
  }

  /** Stops following the current conversation. */
  stop(): void {
    if (!this.current) return;
    this.current.removeAllListeners();
    this.current.unsubscribe();
    this.client?.removeSubscription(this.current);
    this.current = undefined;
  }

  close(): void {
    this.stop();
    this.client?.disconnect();
  }
}
