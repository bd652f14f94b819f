import { type IncomingMessage, type Server, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, type ServerOptions, type WebSocket, WebSocketServer } from 'ws';
import { JSON_CODEC, PROTOBUF_CODEC, type SessionCodec } from './codecs.ts';
import { dispatchCommand } from './commands.ts';
import { OriginPolicy } from './origin.ts';
import { PreframedMessage, sendParts, sendPreframed } from './preframed.ts';
import { ClientSession, disconnectSessions, SessionState } from './session.ts';
import type { SessionHost } from './session-host.ts';
import type { EncodedFrame, SessionTransport } from './transport.ts';

const SESSION = Symbol('realtime.session');
type SocketWithSession = WebSocket & { [SESSION]?: ClientSession };

/**
 * How long a server-initiated close waits for the client's close frame before the TCP connection is destroyed
 * (`ws` defaults to 30 s). The close code was already sent; a peer that does not answer within this time (a
 * stalled or non-reading client) is only holding a socket.
 */
export const CLOSE_HANDSHAKE_TIMEOUT_MS = 5_000;

function ignoreSocketError(): void {}

/** Subprotocols the official clients offer (docs/protocol.md "Transport"); the JSON client offers none. */
const PROTOBUF_SUBPROTOCOL = 'centrifuge-protobuf';
const JSON_SUBPROTOCOL = 'centrifuge-json';

/**
 * The format of a WebSocket connection: Protobuf when the client offers the `centrifuge-protobuf` subprotocol or
 * asks with `?format=protobuf` / `?cf_protocol=protobuf`, JSON otherwise.
 */
export function websocketCodec(request: IncomingMessage): SessionCodec {
  const offered = request.headers['sec-websocket-protocol'];
  if (typeof offered === 'string' && offered.split(',').some((p) => p.trim() === PROTOBUF_SUBPROTOCOL)) {
    return PROTOBUF_CODEC;
  }
  const query = new URL(request.url ?? '/', 'http://localhost').searchParams;
  const format = query.get('format') ?? query.get('cf_protocol');
  return format === 'protobuf' ? PROTOBUF_CODEC : JSON_CODEC;
}

/** Answers a protocol the client offered, so a browser accepts the handshake (RFC 6455 §4.2.2). */
function chooseSubprotocol(protocols: Set<string>): string | false {
  if (protocols.has(PROTOBUF_SUBPROTOCOL)) return PROTOBUF_SUBPROTOCOL;
  if (protocols.has(JSON_SUBPROTOCOL)) return JSON_SUBPROTOCOL;
  return false;
}

/** WebSocket close reasons must fit a control frame (RFC 6455 §5.5: 125 bytes including the 2-byte code). */
function closeReason(reason: string): string {
  return Buffer.byteLength(reason) <= 123 ? reason : Buffer.from(reason).subarray(0, 123).toString('utf8');
}

/**
 * A session's WebSocket: one message per event-loop turn, text lines for JSON, concatenated length-delimited
 * messages in a binary frame for Protobuf, each written as one frame in one socket write (`sendParts`); a lone
 * shared push goes out as its prebuilt frame.
 */
class WebSocketTransport implements SessionTransport {
  readonly name = 'websocket' as const;
  readonly emulation = false;

  constructor(
    readonly ws: WebSocket,
    private readonly binary: boolean,
  ) {}

  isOpen(): boolean {
    return this.ws.readyState === 1;
  }

  write(frames: EncodedFrame[]): void {
    const ws = this.ws;
    if (frames.length === 1) {
      this.writeOne(frames[0]!);
      return;
    }
    // Everything of the turn in one message and one socket write, in the order it was produced.
    const parts = new Array<string | Buffer>(frames.length);
    for (let i = 0; i < frames.length; i++) {
      const frame = frames[i]!;
      parts[i] = frame instanceof PreframedMessage ? frame.payload : frame;
    }
    sendParts(ws, parts, this.binary);
  }

  writeOne(frame: EncodedFrame): void {
    // The common fan-out case: a lone publication push goes out as the frame the hub built once for everyone.
    if (frame instanceof PreframedMessage) sendPreframed(this.ws, frame);
    else sendParts(this.ws, [frame], this.binary);
  }

  bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  close(code: number, reason: string): void {
    this.ws.close(code, closeReason(reason));
  }

  terminate(): void {
    this.ws.terminate();
  }

  pauseInput(): void {
    this.ws.pause();
  }

  resumeInput(): void {
    this.ws.resume();
  }
}

/**
 * Accepts WebSocket upgrades for the engine: Origin policy first (403), 503 while shutting down, then a
 * `ClientSession` per socket, which it keeps until the socket closes. `ws` runs without compression and
 * without its own client set (the acceptor tracks sessions), and the socket listeners are shared functions
 * rather than closures per connection.
 */
export class WebSocketAcceptor {
  /** Open sockets' sessions, from the upgrade until the socket closes. */
  readonly sessions = new Set<ClientSession>();
  private readonly wss: WebSocketServer;
  private readonly originPolicy: OriginPolicy;
  /** One close listener for every socket of this acceptor: forgets the session. */
  private readonly onSocketClose: (this: WebSocket, code: number, reason: Buffer) => void;

  /** `accepting` says whether new connections are accepted now (started, not draining, not shutting down). */
  constructor(
    private readonly host: SessionHost,
    private readonly accepting: () => boolean,
  ) {
    const sessions = this.sessions;
    this.onSocketClose = function (this: WebSocket, code: number, reason: Buffer): void {
      const session = sessionOf(this);
      if (session === undefined) return;
      session.onSocketClose(code, reason.toString('utf8'));
      sessions.delete(session);
    };
    this.originPolicy = new OriginPolicy(host.options.allowedOrigins, host, host.logger);
    // ws (the ^8.23 this package pins) accepts `closeTimeout`; @types/ws 8.18 does not declare it yet.
    const options: ServerOptions & { closeTimeout: number } = {
      noServer: true,
      perMessageDeflate: false,
      maxPayload: host.options.maxFrameBytes,
      clientTracking: false,
      closeTimeout: CLOSE_HANDSHAKE_TIMEOUT_MS,
      handleProtocols: chooseSubprotocol,
    };
    this.wss = new WebSocketServer(options);
  }

  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', ignoreSocketError);
    if (!this.accepting()) {
      rejectUpgrade(socket, 503, 'server is shutting down');
      return;
    }
    const admitted = this.originPolicy.admits(request);
    if (typeof admitted === 'boolean') {
      this.complete(admitted, request, socket, head);
      return;
    }
    void admitted.then((allowed) => this.complete(allowed, request, socket, head));
  }

  attach(server: Server, path: string): void {
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const pathname = (request.url ?? '/').split('?')[0];
      if (pathname === path) this.handleUpgrade(request, socket, head);
      else if (server.listenerCount('upgrade') === 1) rejectUpgrade(socket, 404, 'not found');
    });
  }

  /**
   * Closes every connection with `code` (clients reconnect, typically to another node), waits up to
   * `timeoutMs` for the close handshakes and destroys the sockets still open then.
   */
  disconnectAll(code: number, reason: string | undefined, timeoutMs: number): Promise<void> {
    return disconnectSessions(this.sessions, code, reason, timeoutMs);
  }

  private complete(allowed: boolean, request: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (!allowed) {
      this.host.logger.info({ origin: request.headers.origin }, 'websocket origin refused');
      rejectUpgrade(socket, 403, 'request origin is not authorized');
      return;
    }
    if (!this.accepting()) {
      rejectUpgrade(socket, 503, 'server is shutting down');
      return;
    }
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      const codec = websocketCodec(request);
      const transport = new WebSocketTransport(ws, codec === PROTOBUF_CODEC);
      const session = new ClientSession(this.host, dispatchCommand, transport, codec, request);
      (ws as SocketWithSession)[SESSION] = session;
      this.sessions.add(session);
      ws.on('message', onSocketMessage);
      ws.on('close', this.onSocketClose);
      ws.on('error', onSocketError);
    });
  }
}

function sessionOf(ws: WebSocket): ClientSession | undefined {
  return (ws as SocketWithSession)[SESSION];
}

function onSocketMessage(this: WebSocket, data: RawData): void {
  const session = sessionOf(this);
  if (session === undefined) return;
  const buffer = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
  session.onFrame(buffer);
}

function onSocketError(this: WebSocket, error: Error): void {
  const session = sessionOf(this);
  if (session !== undefined && session.state !== SessionState.Closed) {
    session.host.logger.debug({ client: session.id, error: error.message }, 'websocket error');
  }
}

export function rejectUpgrade(socket: Duplex, status: number, message: string): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: text/plain\r\n` +
      `Content-Length: ${Buffer.byteLength(message)}\r\n\r\n${message}`,
  );
}
