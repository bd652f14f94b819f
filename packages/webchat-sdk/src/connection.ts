import { EMULATION_PATH, HTTP_STREAM_PATH, SSE_PATH, WEBSOCKET_PATH } from '@parley/webchat-protocol';
import { Centrifuge, type Subscription, type TransportEndpoint, UnauthorizedError } from 'centrifuge';
import { asWebchatError, WebchatError } from './errors.ts';
import type { ConnectionChange, ConnectionState, Emit, RealtimeTransport } from './events.ts';
import type { WebchatOptions } from './options.ts';
import type { RestClient } from './rest-client.ts';

const ALL_TRANSPORTS: readonly RealtimeTransport[] = ['websocket', 'http_stream', 'sse'];

/** The endpoints of every transport, and where the fallbacks post their commands. */
interface RealtimeEndpoints {
  websocket: string;
  http_stream: string;
  sse: string;
  emulation: string;
}

/** What the connection reads of the options: where the engine is, how to reach it, and centrifuge's tuning. */
export type ConnectionOptions = Pick<
  WebchatOptions,
  | 'baseUrl'
  | 'realtimeUrl'
  | 'httpStreamUrl'
  | 'sseUrl'
  | 'emulationUrl'
  | 'transports'
  | 'websocket'
  | 'centrifuge'
>;

/**
 * The realtime link of a webchat (steps 2–3 of the setup order: connection token, connect): one centrifuge client
 * over the first transport that works, its state as listeners see it (`connecting`, `connected` once the
 * conversation is subscribed, `disconnected`), and tokens fetched through centrifuge's `getToken` callbacks so they
 * renew themselves.
 */
export class RealtimeConnection {
  private connectionState: ConnectionState = 'disconnected';
  private currentTransport: RealtimeTransport | null = null;
  private client: Centrifuge | null = null;
  private closed = false;
  /**
   * Whether the open conversation's channel is subscribed and its history loaded: messages flow both ways. Set by
   * the conversation; every state but `connected` clears it.
   */
  subscribed = false;

  constructor(
    private readonly options: ConnectionOptions,
    private readonly rest: Pick<RestClient, 'config' | 'connectToken'>,
    private readonly emit: Emit,
  ) {}

  get state(): ConnectionState {
    return this.connectionState;
  }

  get transport(): RealtimeTransport | null {
    return this.currentTransport;
  }

  /** Connects (the connection token comes from `getToken`); resolves once connected, within `timeoutMs`. */
  async connect(timeoutMs: number, stillWanted: () => void): Promise<void> {
    const endpoints = await this.endpoints();
    stillWanted(); // The caller may have closed the chat while the REST calls were in flight.
    const client = this.newClient(endpoints);
    this.client = client;
    client.connect();
    await client.ready(timeoutMs).catch((err: unknown) => {
      throw new WebchatError('connect_failed', `could not connect: ${describe(err)}`, { cause: err });
    });
  }

  /** A subscription to `channel` whose token comes from `fetchToken` (steps 4–5; renewed the same way). */
  subscribe(channel: string, fetchToken: () => Promise<{ token: string }>): Subscription {
    if (!this.client) throw new WebchatError('not_started', 'not connected');
    // Called before the first subscribe, after error 109, and when the 24-hour token is due (sub_refresh).
    return this.client.newSubscription(channel, { getToken: () => this.tokenOrUnauthorized(fetchToken) });
  }

  unsubscribe(subscription: Subscription): void {
    subscription.unsubscribe();
    this.client?.removeSubscription(subscription);
  }

  /** Records a state change and tells listeners (a repeated `connected` is not news; anything else always is). */
  setState(change: ConnectionChange): void {
    if (this.closed && change.reason !== 'closed') return;
    if (change.state !== 'connected') this.subscribed = false;
    const same = change.state === this.connectionState;
    this.connectionState = change.state;
    if (!same || change.state !== 'connected') this.emit('connection', change);
  }

  /**
   * Drops the client without telling listeners: the visitor changed, and only the old identity's link ends (the
   * chat itself reconnects at once).
   */
  drop(): void {
    this.client?.removeAllListeners();
    this.client?.disconnect();
    this.client = null;
    this.subscribed = false;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.client?.disconnect();
    this.setState({ state: 'disconnected', reason: 'closed' });
  }

  /** The WebSocket URL and the fallbacks': given in the options, named by the server, or derived from `baseUrl`. */
  private async endpoints(): Promise<RealtimeEndpoints> {
    const options = this.options;
    const needsServer =
      !options.realtimeUrl || !options.httpStreamUrl || !options.sseUrl || !options.emulationUrl;
    const config = needsServer ? await this.rest.config() : undefined;
    const realtimeUrl = options.realtimeUrl ?? config!.realtime_url;
    const base = options.baseUrl.replace(/\/+$/, '');
    return {
      websocket:
        realtimeUrl.endsWith(WEBSOCKET_PATH) || realtimeUrl.endsWith(`${WEBSOCKET_PATH}/`)
          ? realtimeUrl
          : `${realtimeUrl.replace(/\/+$/, '')}${WEBSOCKET_PATH}`,
      http_stream: options.httpStreamUrl ?? config?.http_stream_url ?? `${base}${HTTP_STREAM_PATH}`,
      sse: options.sseUrl ?? config?.sse_url ?? `${base}${SSE_PATH}`,
      emulation: options.emulationUrl ?? config?.emulation_url ?? `${base}${EMULATION_PATH}`,
    };
  }

  private newClient(endpoints: RealtimeEndpoints): Centrifuge {
    const order = this.options.transports?.length ? this.options.transports : ALL_TRANSPORTS;
    const transports: TransportEndpoint[] = order.map((transport) => ({
      transport,
      endpoint: endpoints[transport],
    }));
    const client = new Centrifuge(transports, {
      ...this.options.centrifuge,
      ...(this.options.websocket ? { websocket: this.options.websocket } : {}),
      emulationEndpoint: endpoints.emulation,
      // Steps 2-3; centrifuge calls this again when the 15-minute token is due for refresh or after error 109.
      getToken: () => this.tokenOrUnauthorized(() => this.rest.connectToken()),
    });
    client.on('connecting', (ctx) =>
      this.setState({ state: 'connecting', code: ctx.code, reason: ctx.reason }),
    );
    client.on('disconnected', (ctx) =>
      this.setState({ state: 'disconnected', code: ctx.code, reason: ctx.reason }),
    );
    client.on('connected', (ctx) => {
      const transport = ctx.transport as RealtimeTransport;
      if (transport !== this.currentTransport) {
        this.currentTransport = transport;
        this.emit('transport', transport);
      }
      if (!this.subscribed) this.setState({ state: 'connecting', reason: 'subscribing' });
    });
    client.on('error', (ctx) =>
      this.emit('error', new WebchatError('realtime_error', `${ctx.type}: ${ctx.error.message}`)),
    );
    return client;
  }

  /**
   * Adapts a REST token call to centrifuge's getToken contract (docs/protocol.md "Token refresh and expiry"): a
   * refusal (401/403/404) becomes `UnauthorizedError`, which ends the connection or subscription instead of
   * retrying forever; any other failure (network down, 5xx, 429) is thrown as is, so centrifuge retries with backoff.
   */
  private async tokenOrUnauthorized(fetchToken: () => Promise<{ token: string }>): Promise<string> {
    try {
      return (await fetchToken()).token;
    } catch (err) {
      const error = asWebchatError(err);
      this.emit('error', error);
      if (error.code === 'http_error' && [401, 403, 404].includes(error.status ?? 0))
        throw new UnauthorizedError(error.message);
      throw error;
    }
  }
}

function describe(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown };
  return `${String(e?.message ?? err)}${e?.code !== undefined ? ` (${String(e.code)})` : ''}`;
}
