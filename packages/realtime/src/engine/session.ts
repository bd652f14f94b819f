import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import {
  type Command,
  type CommandMethod,
  commandMethod,
  encodeDisconnectPush,
  encodeErrorReply,
  encodeMessagePush,
  encodeReply,
  encodeUnsubscribePush,
  isTooDeep,
  PING_FRAME,
} from '../protocol/codec.ts';
import {
  DisconnectCode,
  disconnectReason,
  JSON_TOO_DEEP_ERROR_CODE,
  UnsubscribeCode,
  unsubscribeReason,
} from '../protocol/codes.ts';
import { ClientError, DisconnectError, isBrokerUnavailable, toClientError } from '../protocol/errors.ts';
import { type ProxiedRefresh, proxyRefresh, proxySubRefresh } from '../proxy/calls.ts';
import type { ResolvedProxyEndpoint } from '../proxy/options.ts';
import type { SessionCodec } from './codecs.ts';
import type { DisconnectInfo } from './hooks.ts';
import type { SentFrameType } from './observer.ts';
import type { OutputSink } from './output.ts';
import { type RateLimited, takeRateToken } from './rate-limit.ts';
import type { SessionHost } from './session-host.ts';
import { SharedPush } from './shared-push.ts';
import { type SubscriberConnection, type Subscription, SubscriptionState } from './subscription.ts';
import type { WheelTask } from './timer-wheel.ts';
import type { EncodedFrame, SessionTransport } from './transport.ts';

export enum SessionState {
  /** Socket open, waiting for `connect`. */
  Connecting = 0,
  Connected = 1,
  Closed = 2,
}

/** While this many commands wait, the socket is paused so a fast sender cannot grow the queue without bound. */
const PAUSE_QUEUE_LENGTH = 64;
/** How long after a 2500 "insufficient state" push a command on that channel counts as sent before the client knew. */
const RESUBSCRIBE_GRACE_MS = 10_000;
/** A client that keeps sending after this many rate-limited commands in a row is disconnected with 3013. */
const MAX_REJECTED_IN_A_ROW = 100;

/**
 * Runs one client command (`commands.ts`); handlers reply themselves or throw ClientError / DisconnectError.
 * Handed to each session by the WebSocket acceptor, so the session does not import the command handlers.
 */
export type CommandDispatcher = (
  session: ClientSession,
  method: CommandMethod,
  id: number,
  command: Command,
) => Promise<void>;

/** A command in the session's queue; pongs never get there (`onFrame` takes them). */
interface QueuedCommand {
  command: Command;
  method: CommandMethod | undefined;
}

/**
 * One client connection, whatever its transport (WebSocket, HTTP-streaming, SSE) and format (JSON, Protobuf): the
 * protocol state machine (connecting → connected → closed), its subscriptions, the ordered command queue, output
 * coalescing and the deadlines the shared timer wheel drives.
 */
export class ClientSession implements SubscriberConnection, WheelTask, OutputSink, RateLimited {
  readonly id: string = randomUUID();
  /**
   * Emulation transports only: the id `/emulation` requests name this session by (docs/protocol.md "Bidirectional
   * emulation"). Separate from the client id, which other clients see in presence and publications.
   */
  readonly sessionId: string | undefined;
  user = '';
  connInfo: string | undefined;
  meta: unknown;
  clientName = '';
  clientVersion = '';
  state = SessionState.Connecting;
  /**
   * A connect error reply was written; later commands are ignored, as the Go server stops reading
   * (docs/protocol.md "Command order").
   */
  connectFailed = false;
  readonly subs = new Map<string, Subscription>();
  /** Unix ms when the connection credentials expire; 0 = never. */
  expireAt = 0;
  /** Set until `connect` completes; the upgrade request for `onConnecting`. */
  request: IncomingMessage | undefined;
  origin: string | undefined;
  /** The client's request headers, kept only while proxies are configured (their `http_headers`). */
  readonly proxyHeaders: IncomingHttpHeaders | undefined;

  wheelSlot = 0;
  rateTokens: number;
  rateUpdatedAt: number;
  private staleDeadline: number;
  private nextPingAt = 0;
  private pongDeadline = 0;
  private presenceRefreshAt = 0;
  private rejectedInARow = 0;
  private storageValue: Record<string, unknown> | undefined;
  /** Commands waiting their turn, each with the method `onFrame` already read from it. */
  private queue: QueuedCommand[] = [];
  /** Channels whose subscription the server ended with 2500 (insufficient state), by when: see isResubscribing. */
  private readonly resubscribeAsked = new Map<string, number>();
  private processing = false;
  private paused = false;
  /** A refresh proxy call is under way (docs/protocol.md "Proxies"). */
  private refreshing = false;
  private out: Array<string | SharedPush> | null = null;
  /** The output turn of the last push written straight away (`enqueue`); 0 = none yet. */
  private directWriteTurn = 0;

  constructor(
    readonly host: SessionHost,
    private readonly dispatchCommand: CommandDispatcher,
    readonly transport: SessionTransport,
    readonly codec: SessionCodec,
    request: IncomingMessage,
  ) {
    const now = Date.now();
    this.sessionId = transport.emulation ? randomUUID() : undefined;
    this.request = request;
    this.proxyHeaders = host.options.proxies.active ? request.headers : undefined;
    const origin = request.headers.origin;
    this.origin = typeof origin === 'string' ? origin : undefined;
    const rate = host.options.commandRate;
    this.rateTokens = rate === false ? 0 : rate.burst;
    this.rateUpdatedAt = now;
    this.staleDeadline = now + host.options.staleCloseDelayMs;
    host.wheel.schedule(this, this.staleDeadline);
  }

  /** Re-reads the state after an await (the socket may have closed meanwhile). */
  get closed(): boolean {
    return this.state === SessionState.Closed;
  }

  get storage(): Record<string, unknown> {
    this.storageValue ??= {};
    return this.storageValue;
  }

  set storage(value: Record<string, unknown>) {
    this.storageValue = value;
  }

  channels(): string[] {
    return [...this.subs.keys()];
  }

  // ---- input -------------------------------------------------------------------------------------------------

  /**
   * Incoming data (a WebSocket message, the body that opened an HTTP stream, an `/emulation` request): commands in
   * the connection's format, processed strictly in order.
   */
  onFrame(data: Buffer): void {
    if (this.state === SessionState.Closed || this.connectFailed) return;
    let commands: Command[];
    try {
      commands = this.codec.decodeCommands(data);
    } catch {
      this.disconnect(DisconnectCode.badRequest);
      return;
    }
    const rate = this.host.options.commandRate;
    const observer = this.host.options.observer;
    const now = Date.now();
    for (const command of commands) {
      const method = commandMethod(command);
      observer?.commandReceived(method ?? 'unknown', this.transport.name);
      if (method === 'pong') {
        if (this.state !== SessionState.Connected) {
          this.disconnect(DisconnectCode.badRequest);
          return;
        }
        // Unexpected pongs (no outstanding ping) are ignored rather than answered with 3501
        // (docs/protocol.md "Ping and pong").
        this.pongDeadline = 0;
        continue;
      }
      if (rate !== false && !takeRateToken(this, rate, now)) {
        this.rejectedInARow += 1;
        if (this.rejectedInARow > MAX_REJECTED_IN_A_ROW) {
          this.disconnect(DisconnectCode.tooManyRequests);
          return;
        }
        if (command.id) this.replyError(command.id, new ClientError(111));
        continue;
      }
      this.rejectedInARow = 0;
      this.queue.push({ command, method });
    }
    if (this.queue.length > PAUSE_QUEUE_LENGTH && !this.paused) {
      this.paused = true;
      this.transport.pauseInput();
    }
    if (!this.processing && this.queue.length > 0) void this.processQueue();
  }

  private async processQueue(): Promise<void> {
    this.processing = true;
    try {
      while (this.queue.length > 0 && this.state !== SessionState.Closed && !this.connectFailed) {
        const { command, method } = this.queue.shift()!;
        await this.dispatch(command, method);
      }
    } finally {
      this.processing = false;
      if (this.connectFailed) this.queue.length = 0;
      if (this.state !== SessionState.Closed) this.resumeReading();
    }
  }

  private resumeReading(): void {
    if (!this.paused) return;
    this.paused = false;
    this.transport.resumeInput();
  }

  private async dispatch(command: Command, method: CommandMethod | undefined): Promise<void> {
    // Connect must come first and only once; anything else is a protocol violation → 3501 (LIB dispatchCommand).
    if (method === undefined) return this.disconnect(DisconnectCode.badRequest);
    if ((this.state === SessionState.Connecting) !== (method === 'connect')) {
      return this.disconnect(DisconnectCode.badRequest);
    }
    const id = command.id ?? 0;
    if (id === 0 && method !== 'send') return this.disconnect(DisconnectCode.badRequest);
    const observer = this.host.options.observer;
    const started = observer === undefined ? 0 : performance.now();
    let errorCode: number | undefined;
    try {
      if (isTooDeep(command)) throw new ClientError(JSON_TOO_DEEP_ERROR_CODE, 'json too deep');
      await this.dispatchCommand(this, method, id, command);
    } catch (error) {
      errorCode = this.handleCommandError(method, id, error);
    }
    observer?.commandHandled(method, (performance.now() - started) / 1000, errorCode);
  }

  /** Answers a failed command; returns the reply error's code (the disconnect code when it ends the connection). */
  private handleCommandError(method: CommandMethod, id: number, error: unknown): number | undefined {
    if (this.state === SessionState.Closed) return undefined;
    if (error instanceof DisconnectError) {
      this.disconnect(error.protocolCode, error.reason);
      return error.protocolCode;
    }
    const clientError = toClientError(error);
    if (!(error instanceof ClientError)) {
      const fields = { client: this.id, user: this.user, command: method, error: String(error) };
      // An unreachable broker is an outage the operator sees once per command, not a bug in the engine.
      if (isBrokerUnavailable(error)) this.host.logger.warn(fields, 'command failed: broker unavailable');
      else this.host.logger.error(fields, 'command failed with an internal error');
    }
    if (method === 'send') return clientError.protocolCode;
    if (method === 'connect') this.connectFailed = true;
    this.replyError(id, clientError);
    return clientError.protocolCode;
  }

  // ---- output ------------------------------------------------------------------------------------------------

  /**
   * Queues a reply or push (JSON text, or a push shared by a channel's subscribers); frames of one event-loop turn
   * are written together (one WebSocket message, one HTTP-streaming chunk).
   */
  enqueue(frame: string | SharedPush): void {
    if (this.state === SessionState.Closed) return;
    if (this.out !== null) {
      this.out.push(frame);
      return;
    }
    const output = this.host.output;
    // A push shared by a channel's subscribers, with nothing queued before it: its prebuilt frame goes out now, once
    // per turn; anything after it in this turn is queued and joined into one more message
    // (packages/realtime/src/engine/output.ts). Replies stay queued, so the replies to a batch of commands go together.
    if (
      frame instanceof SharedPush &&
      this.state === SessionState.Connected &&
      output.claimDirectWrite(this.directWriteTurn)
    ) {
      this.directWriteTurn = output.turn;
      this.writeShared(frame);
      return;
    }
    this.out = [frame];
    output.mark(this);
  }

  reply(id: number, method: CommandMethod, resultJson: string): void {
    this.enqueue(encodeReply(id, method, resultJson));
  }

  replyError(id: number, error: ClientError): void {
    this.enqueue(encodeErrorReply(id, error));
  }

  send(data: unknown): void {
    this.enqueue(encodeMessagePush(JSON.stringify(data ?? null)));
  }

  flushOutput(): void {
    const out = this.out;
    this.out = null;
    if (this.state === SessionState.Closed) return;
    if (out !== null) this.write(out);
    // No unbounded queues: a client that does not read is dropped with 3008 "slow" (reconnects).
    if (this.transport.bufferedAmount() > this.host.options.maxBufferedBytes)
      this.disconnect(DisconnectCode.slow);
  }

  /**
   * Writes a shared push at once (see `enqueue`). A client over the slow-consumer limit is dropped when the turn
   * ends, as after a queued write, not in the middle of the hub's loop over the channel's subscribers.
   */
  private writeShared(push: SharedPush): void {
    const transport = this.transport;
    if (!transport.isOpen()) return;
    transport.writeOne(this.codec.shared(push));
    this.host.options.observer?.framesSent(push.kind, transport.name, 1);
    if (transport.bufferedAmount() > this.host.options.maxBufferedBytes) this.host.output.mark(this);
  }

  private write(frames: Array<string | SharedPush>): void {
    if (!this.transport.isOpen()) return;
    const codec = this.codec;
    const encoded: EncodedFrame[] = new Array(frames.length);
    for (let i = 0; i < frames.length; i++) {
      const frame = frames[i]!;
      encoded[i] = frame instanceof SharedPush ? codec.shared(frame) : codec.encode(frame);
    }
    this.transport.write(encoded);
    const observer = this.host.options.observer;
    if (observer !== undefined) {
      for (const frame of frames) observer.framesSent(sentFrameType(frame), this.transport.name, 1);
    }
  }

  // ---- lifecycle ---------------------------------------------------------------------------------------------

  /** Called by connect once the credentials are accepted. */
  markConnected(now: number): void {
    this.state = SessionState.Connected;
    this.request = undefined;
    this.origin = undefined;
    const { pingIntervalMs } = this.host.options;
    // First ping at a random moment in [interval/2, interval) spreads pings of clients that connected together.
    if (pingIntervalMs > 0) this.nextPingAt = now + pingIntervalMs / 2 + Math.random() * (pingIntervalMs / 2);
    this.reschedule(now);
  }

  disconnect(code: number = DisconnectCode.forceNoReconnect, reason?: string): void {
    if (this.state === SessionState.Closed) return;
    const text = reason ?? disconnectReason(code);
    // Pending replies go out before the close frame so the client sees them (e.g. a connect error).
    const out = this.out;
    this.out = null;
    if (out !== null) this.write(out);
    this.finish({ code, reason: text });
    // A socket paused for back-pressure never reads the client's answering close frame, so the close handshake
    // (RFC 6455 §7.1.2) could not finish and the client would see a silent, live-looking socket until the close
    // timeout; the queue is gone now, so reading again is harmless (`onFrame` ignores a closed session).
    this.resumeReading();
    try {
      this.transport.close(code, text, () => this.codec.encode(encodeDisconnectPush(code, text)));
    } catch {
      this.transport.terminate();
    }
  }

  /** Drops the connection without a goodbye (a drain that ran out of time). */
  terminate(): void {
    this.transport.terminate();
  }

  /** The socket closed (by the client, the network, or after our close frame). */
  onSocketClose(code: number, reason: string): void {
    if (this.state !== SessionState.Closed) this.finish({ code, reason });
  }

  private finish(info: DisconnectInfo): void {
    const wasConnected = this.state === SessionState.Connected;
    this.state = SessionState.Closed;
    this.out = null;
    this.queue.length = 0;
    this.request = undefined;
    this.host.wheel.cancel(this);
    if (wasConnected) this.host.hub.removeClient(this);
    for (const sub of this.subs.values()) {
      this.host.finishSubscription(sub, {
        code: UnsubscribeCode.disconnect,
        reason: unsubscribeReason(UnsubscribeCode.disconnect),
      });
    }
    this.subs.clear();
    if (wasConnected) this.host.emitEvent('onDisconnect', this, info);
  }

  /**
   * Ends a subscription from the server side with an unsubscribe push (docs/protocol.md "Unsubscribe codes").
   */
  unsubscribe(channel: string, code: number = UnsubscribeCode.server, reason?: string): void {
    const sub = this.subs.get(channel);
    if (sub === undefined || this.state === SessionState.Closed) return;
    const text = reason ?? unsubscribeReason(code);
    this.subs.delete(channel);
    const wasSubscribed = sub.state === SubscriptionState.Subscribed;
    this.host.finishSubscription(sub, { code, reason: text });
    if (wasSubscribed) this.enqueue(encodeUnsubscribePush(channel, code, text));
  }

  /**
   * A publication was lost for this subscriber (gap, epoch change, buffer overflow): a client-side
   * subscription is told to resubscribe and recover (2500); a server-side one can only be fixed by
   * reconnecting (3010), docs/protocol.md "Positioning".
   */
  onInsufficientState(sub: Subscription): void {
    if (sub.serverSide) {
      this.disconnect(DisconnectCode.insufficientState);
      return;
    }
    this.resubscribeAsked.set(sub.channel, Date.now());
    this.unsubscribe(sub.channel, UnsubscribeCode.insufficientState);
  }

  /**
   * True while the client was told to resubscribe (2500) to `channel` and has not done so yet (for at most
   * RESUBSCRIBE_GRACE_MS). A command it sent before it read that push is not a permission problem: it is answered
   * with a temporary error, so the client repeats it once it is subscribed again.
   */
  isResubscribing(channel: string, now = Date.now()): boolean {
    const at = this.resubscribeAsked.get(channel);
    if (at === undefined) return false;
    if (now - at <= RESUBSCRIBE_GRACE_MS) return true;
    this.resubscribeAsked.delete(channel);
    return false;
  }

  /** The client subscribed again: the grace of `isResubscribing` ends. */
  noteSubscribed(channel: string): void {
    this.resubscribeAsked.delete(channel);
  }

  // ---- timers ------------------------------------------------------------------------------------------------

  /** Re-arms the wheel for the earliest deadline of this session. */
  reschedule(now: number): void {
    if (this.state === SessionState.Closed) return;
    let next = Number.POSITIVE_INFINITY;
    if (this.state === SessionState.Connecting) next = this.staleDeadline;
    else {
      const { expiredCloseDelayMs, expiredSubCloseDelayMs, proxies } = this.host.options;
      if (this.nextPingAt > 0) next = Math.min(next, this.nextPingAt);
      if (this.pongDeadline > 0) next = Math.min(next, this.pongDeadline);
      // With a refresh proxy the server renews at the expiry itself; otherwise the client has a grace to refresh.
      if (this.expireAt > 0 && !this.refreshing) {
        next = Math.min(next, this.expireAt + (proxies.refresh ? 0 : expiredCloseDelayMs));
      }
      if (this.presenceRefreshAt > 0) next = Math.min(next, this.presenceRefreshAt);
      for (const sub of this.subs.values()) {
        if (sub.expireAt > 0 && !sub.refreshing) {
          next = Math.min(next, sub.expireAt + (this.subRefreshProxy(sub) ? 0 : expiredSubCloseDelayMs));
        }
      }
    }
    if (next !== Number.POSITIVE_INFINITY) this.host.wheel.schedule(this, Math.max(next, now));
  }

  /** Presence entries of this session need refreshing from now on. */
  notePresence(now: number): void {
    if (this.presenceRefreshAt === 0) {
      this.presenceRefreshAt = now + this.host.options.presenceUpdateIntervalMs;
      this.reschedule(now);
    }
  }

  onTimer(now: number): void {
    if (this.state === SessionState.Closed) return;
    if (this.state === SessionState.Connecting) {
      if (now >= this.staleDeadline) {
        if (this.connectFailed) this.transport.terminate();
        else this.disconnect(DisconnectCode.stale);
        return;
      }
      this.reschedule(now);
      return;
    }
    const options = this.host.options;
    if (this.pongDeadline > 0 && now >= this.pongDeadline) {
      this.disconnect(DisconnectCode.noPong);
      return;
    }
    const refreshProxy = options.proxies.refresh;
    if (refreshProxy !== undefined) {
      if (this.expireAt > 0 && now >= this.expireAt && !this.refreshing)
        this.refreshThroughProxy(refreshProxy);
    } else if (this.expireAt > 0 && now >= this.expireAt + options.expiredCloseDelayMs) {
      this.disconnect(DisconnectCode.expired);
      return;
    }
    if (this.nextPingAt > 0 && now >= this.nextPingAt) {
      this.enqueue(PING_FRAME);
      if (options.pongTimeoutMs > 0) this.pongDeadline = now + options.pongTimeoutMs;
      this.nextPingAt = now + options.pingIntervalMs;
    }
    this.checkSubscriptionExpiry(now);
    if (this.state !== SessionState.Connected) return;
    if (this.presenceRefreshAt > 0 && now >= this.presenceRefreshAt) this.refreshPresence(now);
    this.reschedule(now);
  }

  private checkSubscriptionExpiry(now: number): void {
    const grace = this.host.options.expiredSubCloseDelayMs;
    for (const sub of [...this.subs.values()]) {
      if (sub.expireAt === 0 || sub.state !== SubscriptionState.Subscribed) continue;
      const proxy = this.subRefreshProxy(sub);
      if (proxy !== undefined) {
        if (now >= sub.expireAt && !sub.refreshing) this.refreshSubscriptionThroughProxy(sub, proxy);
        continue;
      }
      if (now < sub.expireAt + grace) continue;
      if (sub.serverSide) {
        this.disconnect(DisconnectCode.subExpired);
        return;
      }
      this.unsubscribe(sub.channel, UnsubscribeCode.expired);
    }
  }

  /** The sub_refresh proxy of a subscription's namespace, if it has one. */
  private subRefreshProxy(sub: Subscription): ResolvedProxyEndpoint | undefined {
    return this.host.options.proxies.channelProxy('sub_refresh', sub.options.proxies.sub_refresh);
  }

  /**
   * Server-side refresh (Centrifugo's refresh proxy): the backend says whether the connection lives on, until when
   * and with which info. A backend that cannot answer gives the connection another minute, as Centrifugo does.
   */
  private refreshThroughProxy(proxy: ResolvedProxyEndpoint): void {
    this.refreshing = true;
    proxyRefresh(proxy, this)
      .then(
        (refresh) => this.applyProxiedRefresh(refresh),
        (error: unknown) => this.onProxiedRefreshError(error, () => (this.expireAt = Date.now() + 60_000)),
      )
      .finally(() => {
        this.refreshing = false;
        this.reschedule(Date.now());
      });
  }

  private applyProxiedRefresh(refresh: ProxiedRefresh): void {
    if (this.state !== SessionState.Connected) return;
    if (refresh.expired || (refresh.expireAt > 0 && refresh.expireAt * 1000 <= Date.now())) {
      this.disconnect(DisconnectCode.expired);
      return;
    }
    this.expireAt = refresh.expireAt * 1000;
    if (refresh.info !== undefined && refresh.info !== this.connInfo) {
      this.connInfo = refresh.info;
      for (const sub of this.subs.values()) sub.resetInfo();
    }
  }

  /** Same for one subscription (sub_refresh proxy): expired → unsubscribe 2501, or 3006 when server-side. */
  private refreshSubscriptionThroughProxy(sub: Subscription, proxy: ResolvedProxyEndpoint): void {
    sub.refreshing = true;
    proxySubRefresh(proxy, this, sub.channel)
      .then(
        (refresh) => {
          if (this.subs.get(sub.channel) !== sub || this.state !== SessionState.Connected) return;
          if (refresh.expired || (refresh.expireAt > 0 && refresh.expireAt * 1000 <= Date.now())) {
            if (sub.serverSide) this.disconnect(DisconnectCode.subExpired);
            else this.unsubscribe(sub.channel, UnsubscribeCode.expired);
            return;
          }
          sub.expireAt = refresh.expireAt * 1000;
          if (refresh.info !== undefined && refresh.info !== sub.chanInfo) {
            sub.chanInfo = refresh.info;
            sub.resetInfo();
          }
        },
        (error: unknown) => this.onProxiedRefreshError(error, () => (sub.expireAt = Date.now() + 60_000)),
      )
      .finally(() => {
        sub.refreshing = false;
        this.reschedule(Date.now());
      });
  }

  /** A disconnect from the backend applies; any other failure is logged and `retryLater` postpones the check. */
  private onProxiedRefreshError(error: unknown, retryLater: () => void): void {
    if (error instanceof DisconnectError) {
      this.disconnect(error.protocolCode, error.reason);
      return;
    }
    this.host.logger.warn(
      { client: this.id, error: String(error) },
      'refresh proxy failed; retrying in 60 s',
    );
    retryLater();
  }

  private refreshPresence(now: number): void {
    let any = false;
    for (const sub of this.subs.values()) {
      if (!sub.flags.presence || sub.state !== SubscriptionState.Subscribed) continue;
      any = true;
      this.host.addPresence(sub);
    }
    this.presenceRefreshAt = any ? now + this.host.options.presenceUpdateIntervalMs : 0;
  }
}

/** The open sessions of one acceptor (a set, or a map by session id): what a drain walks and empties. */
interface SessionCollection {
  readonly size: number;
  values(): IterableIterator<ClientSession>;
  clear(): void;
}

/**
 * Closes every session with `code` (clients reconnect, typically to another node), waits up to `timeoutMs` for
 * them to go (each acceptor forgets a session when its socket or response closes) and drops those still open then.
 */
export async function disconnectSessions(
  sessions: SessionCollection,
  code: number,
  reason: string | undefined,
  timeoutMs: number,
): Promise<void> {
  for (const session of [...sessions.values()]) session.disconnect(code, reason);
  const deadline = Date.now() + timeoutMs;
  while (sessions.size > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  for (const session of sessions.values()) session.terminate();
  sessions.clear();
}

/** The metrics type of a queued frame: JSON text starting `{"id"` is a reply, `{}` a ping, other text a push. */
function sentFrameType(frame: string | SharedPush): SentFrameType {
  if (frame instanceof SharedPush) return frame.kind;
  if (frame === PING_FRAME) return 'ping';
  return frame.startsWith('{"id"') ? 'reply' : 'push';
}
