import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { WebSocket } from 'ws';
import {
  type Command,
  type CommandMethod,
  commandMethod,
  decodeFrame,
  encodeErrorReply,
  encodeMessagePush,
  encodeReply,
  encodeUnsubscribePush,
  PING_FRAME,
} from '../protocol/codec.ts';
import { DisconnectCode, disconnectReason, UnsubscribeCode, unsubscribeReason } from '../protocol/codes.ts';
import { ClientError, DisconnectError, toClientError } from '../protocol/errors.ts';
import { dispatchCommand } from './commands.ts';
import type { RealtimeEngine } from './engine.ts';
import type { ClientHandle, DisconnectInfo } from './hooks.ts';
import type { OutputSink } from './output.ts';
import { PreframedText, sendPreframed } from './preframed.ts';
import { type RateLimited, takeRateToken } from './rate-limit.ts';
import { type Subscription, SubscriptionState } from './subscription.ts';
import type { WheelTask } from './timer-wheel.ts';

export enum SessionState {
  /** Socket open, waiting for `connect`. */
  Connecting = 0,
  Connected = 1,
  Closed = 2,
}

/** While this many commands wait, the socket is paused so a fast sender cannot grow the queue without bound. */
const PAUSE_QUEUE_LENGTH = 64;
/** A client that keeps sending after this many rate-limited commands in a row is disconnected with 3013. */
const MAX_REJECTED_IN_A_ROW = 100;
const NEWLINE = Buffer.from('\n');
const TEXT_FRAME = { binary: false } as const;

/** WebSocket close reasons must fit a control frame (RFC 6455 §5.5: 125 bytes including the 2-byte code). */
function closeReason(reason: string): string {
  return Buffer.byteLength(reason) <= 123 ? reason : Buffer.from(reason).subarray(0, 123).toString('utf8');
}

/**
 * One WebSocket connection: the protocol state machine (connecting → connected → closed), its subscriptions,
 * the ordered command queue, output coalescing and the deadlines the shared timer wheel drives.
 */
export class ClientSession implements ClientHandle, WheelTask, OutputSink, RateLimited {
  readonly id: string = randomUUID();
  user = '';
  connInfo: string | undefined;
  meta: unknown;
  clientName = '';
  clientVersion = '';
  state = SessionState.Connecting;
  /** A connect error reply was written; later commands are ignored, as the Go server stops reading (§1.4). */
  connectFailed = false;
  readonly subs = new Map<string, Subscription>();
  /** Unix ms when the connection credentials expire; 0 = never. */
  expireAt = 0;
  /** Set until `connect` completes; the upgrade request for `onConnecting`. */
  request: IncomingMessage | undefined;
  origin: string | undefined;

  wheelSlot = 0;
  rateTokens: number;
  rateUpdatedAt: number;
  private staleDeadline: number;
  private nextPingAt = 0;
  private pongDeadline = 0;
  private presenceRefreshAt = 0;
  private rejectedInARow = 0;
  private storageValue: Record<string, unknown> | undefined;
  private queue: Command[] = [];
  private processing = false;
  private paused = false;
  private out: Array<string | Buffer | PreframedText> | null = null;

  constructor(
    readonly engine: RealtimeEngine,
    readonly ws: WebSocket,
    request: IncomingMessage,
  ) {
    const now = Date.now();
    this.request = request;
    const origin = request.headers.origin;
    this.origin = typeof origin === 'string' ? origin : undefined;
    const rate = engine.options.commandRate;
    this.rateTokens = rate === false ? 0 : rate.burst;
    this.rateUpdatedAt = now;
    this.staleDeadline = now + engine.options.staleCloseDelayMs;
    engine.wheel.schedule(this, this.staleDeadline);
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

  /** A text or binary WebSocket message: newline-separated JSON commands processed strictly in order. */
  onFrame(data: Buffer): void {
    if (this.state === SessionState.Closed || this.connectFailed) return;
    let commands: Command[];
    try {
      commands = decodeFrame(data.toString('utf8'));
    } catch {
      this.disconnect(DisconnectCode.badRequest);
      return;
    }
    const rate = this.engine.options.commandRate;
    const now = Date.now();
    for (const command of commands) {
      const method = commandMethod(command);
      if (method === 'pong') {
        if (this.state !== SessionState.Connected) {
          this.disconnect(DisconnectCode.badRequest);
          return;
        }
        // Unexpected pongs (no outstanding ping) are ignored rather than answered with 3501 (task rule).
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
      this.queue.push(command);
    }
    if (this.queue.length > PAUSE_QUEUE_LENGTH && !this.paused) {
      this.paused = true;
      this.ws.pause();
    }
    if (!this.processing && this.queue.length > 0) void this.processQueue();
  }

  private async processQueue(): Promise<void> {
    this.processing = true;
    try {
      while (this.queue.length > 0 && this.state !== SessionState.Closed && !this.connectFailed) {
        const command = this.queue.shift()!;
        await this.dispatch(command);
      }
    } finally {
      this.processing = false;
      if (this.connectFailed) this.queue.length = 0;
      if (this.paused && this.state !== SessionState.Closed) {
        this.paused = false;
        this.ws.resume();
      }
    }
  }

  private async dispatch(command: Command): Promise<void> {
    const method = commandMethod(command);
    // Connect must come first and only once; anything else is a protocol violation → 3501 (LIB dispatchCommand).
    if (method === undefined || method === 'pong') return this.disconnect(DisconnectCode.badRequest);
    if ((this.state === SessionState.Connecting) !== (method === 'connect')) {
      return this.disconnect(DisconnectCode.badRequest);
    }
    const id = command.id ?? 0;
    if (id === 0 && method !== 'send') return this.disconnect(DisconnectCode.badRequest);
    try {
      await dispatchCommand(this, method, id, command);
    } catch (error) {
      this.handleCommandError(method, id, error);
    }
  }

  private handleCommandError(method: CommandMethod, id: number, error: unknown): void {
    if (this.state === SessionState.Closed) return;
    if (error instanceof DisconnectError) {
      this.disconnect(error.protocolCode, error.reason);
      return;
    }
    const clientError = toClientError(error);
    if (clientError.protocolCode === 100 && !(error instanceof ClientError)) {
      this.engine.logger.error(
        { client: this.id, user: this.user, command: method, error: String(error) },
        'command failed with an internal error',
      );
    }
    if (method === 'send') return;
    if (method === 'connect') this.connectFailed = true;
    this.replyError(id, clientError);
  }

  // ---- output ------------------------------------------------------------------------------------------------

  /** Queues a frame (a reply or push); frames of one event-loop turn are written as one WebSocket message. */
  enqueue(frame: string | Buffer | PreframedText): void {
    if (this.state === SessionState.Closed) return;
    if (this.out === null) {
      this.out = [frame];
      this.engine.output.mark(this);
    } else {
      this.out.push(frame);
    }
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
    if (out === null || this.state === SessionState.Closed) return;
    this.write(out);
    // No unbounded queues: a client that does not read is dropped with 3008 "slow" (reconnects).
    if (this.ws.bufferedAmount > this.engine.options.maxBufferedBytes) this.disconnect(DisconnectCode.slow);
  }

  private write(frames: Array<string | Buffer | PreframedText>): void {
    if (this.ws.readyState !== 1) return;
    if (frames.length === 1) {
      const only = frames[0]!;
      // The common fan-out case: a lone publication push goes out as the frame the hub built once for everyone.
      if (only instanceof PreframedText) sendPreframed(this.ws, only);
      else this.ws.send(only, TEXT_FRAME);
      return;
    }
    if (frames.every((f) => typeof f === 'string')) {
      this.ws.send(frames.join('\n'), TEXT_FRAME);
      return;
    }
    const parts: Buffer[] = [];
    for (const frame of frames) {
      if (parts.length > 0) parts.push(NEWLINE);
      if (typeof frame === 'string') parts.push(Buffer.from(frame));
      else parts.push(frame instanceof PreframedText ? frame.payload : frame);
    }
    this.ws.send(Buffer.concat(parts), TEXT_FRAME);
  }

  // ---- lifecycle ---------------------------------------------------------------------------------------------

  /** Called by connect once the credentials are accepted. */
  markConnected(now: number): void {
    this.state = SessionState.Connected;
    this.request = undefined;
    this.origin = undefined;
    const { pingIntervalMs } = this.engine.options;
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
    try {
      this.ws.close(code, closeReason(text));
    } catch {
      this.ws.terminate();
    }
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
    this.engine.wheel.cancel(this);
    if (wasConnected) this.engine.hub.removeClient(this);
    for (const sub of this.subs.values()) {
      this.engine.finishSubscription(sub, {
        code: UnsubscribeCode.disconnect,
        reason: unsubscribeReason(UnsubscribeCode.disconnect),
      });
    }
    this.subs.clear();
    if (wasConnected) this.engine.emitEvent('onDisconnect', this, info);
  }

  /** Ends a subscription from the server side with an unsubscribe push (brief §3.4). */
  unsubscribe(channel: string, code: number = UnsubscribeCode.server, reason?: string): void {
    const sub = this.subs.get(channel);
    if (sub === undefined || this.state === SessionState.Closed) return;
    const text = reason ?? unsubscribeReason(code);
    this.subs.delete(channel);
    const wasSubscribed = sub.state === SubscriptionState.Subscribed;
    this.engine.finishSubscription(sub, { code, reason: text });
    if (wasSubscribed) this.enqueue(encodeUnsubscribePush(channel, code, text));
  }

  /**
   * A publication was lost for this subscriber (gap, epoch change, buffer overflow): a client-side subscription is
   * told to resubscribe and recover (2500); a server-side one can only be fixed by reconnecting (3010), §5.6.
   */
  onInsufficientState(sub: Subscription): void {
    if (sub.serverSide) this.disconnect(DisconnectCode.insufficientState);
    else this.unsubscribe(sub.channel, UnsubscribeCode.insufficientState);
  }

  // ---- timers ------------------------------------------------------------------------------------------------

  /** Re-arms the wheel for the earliest deadline of this session. */
  reschedule(now: number): void {
    if (this.state === SessionState.Closed) return;
    let next = Number.POSITIVE_INFINITY;
    if (this.state === SessionState.Connecting) next = this.staleDeadline;
    else {
      const { expiredCloseDelayMs, expiredSubCloseDelayMs } = this.engine.options;
      if (this.nextPingAt > 0) next = Math.min(next, this.nextPingAt);
      if (this.pongDeadline > 0) next = Math.min(next, this.pongDeadline);
      if (this.expireAt > 0) next = Math.min(next, this.expireAt + expiredCloseDelayMs);
      if (this.presenceRefreshAt > 0) next = Math.min(next, this.presenceRefreshAt);
      for (const sub of this.subs.values()) {
        if (sub.expireAt > 0) next = Math.min(next, sub.expireAt + expiredSubCloseDelayMs);
      }
    }
    if (next !== Number.POSITIVE_INFINITY) this.engine.wheel.schedule(this, Math.max(next, now));
  }

  /** Presence entries of this session need refreshing from now on. */
  notePresence(now: number): void {
    if (this.presenceRefreshAt === 0) {
      this.presenceRefreshAt = now + this.engine.options.presenceUpdateIntervalMs;
      this.reschedule(now);
    }
  }

  onTimer(now: number): void {
    if (this.state === SessionState.Closed) return;
    if (this.state === SessionState.Connecting) {
      if (now >= this.staleDeadline) {
        if (this.connectFailed) this.ws.terminate();
        else this.disconnect(DisconnectCode.stale);
        return;
      }
      this.reschedule(now);
      return;
    }
    const options = this.engine.options;
    if (this.pongDeadline > 0 && now >= this.pongDeadline) {
      this.disconnect(DisconnectCode.noPong);
      return;
    }
    if (this.expireAt > 0 && now >= this.expireAt + options.expiredCloseDelayMs) {
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
    const grace = this.engine.options.expiredSubCloseDelayMs;
    for (const sub of [...this.subs.values()]) {
      if (sub.expireAt === 0 || now < sub.expireAt + grace || sub.state !== SubscriptionState.Subscribed)
        continue;
      if (sub.serverSide) {
        this.disconnect(DisconnectCode.subExpired);
        return;
      }
      this.unsubscribe(sub.channel, UnsubscribeCode.expired);
    }
  }

  private refreshPresence(now: number): void {
    let any = false;
    for (const sub of this.subs.values()) {
      if (!sub.flags.presence || sub.state !== SubscriptionState.Subscribed) continue;
      any = true;
      this.engine.addPresence(sub);
    }
    this.presenceRefreshAt = any ? now + this.engine.options.presenceUpdateIntervalMs : 0;
  }
}
