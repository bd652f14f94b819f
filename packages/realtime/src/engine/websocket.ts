import { type IncomingMessage, type Server, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import type { RealtimeEngine } from './engine.ts';
import { compileOriginPatterns, isOriginAllowed } from './origin.ts';
import { ClientSession, SessionState } from './session.ts';

const SESSION = Symbol('realtime.session');
type SocketWithSession = WebSocket & { [SESSION]?: ClientSession };

function ignoreSocketError(): void {}

/**
 * Accepts WebSocket upgrades for the engine: Origin policy first (403), 503 while shutting down, then a
 * `ClientSession` per socket. `ws` runs without compression and without its own client set (the engine tracks
 * sessions), and the socket listeners are shared functions rather than closures per connection.
 */
export class WebSocketAcceptor {
  private readonly wss: WebSocketServer;
  private readonly originPatterns: RegExp[];

  constructor(private readonly engine: RealtimeEngine) {
    this.originPatterns = compileOriginPatterns(engine.options.allowedOrigins);
    this.wss = new WebSocketServer({
      noServer: true,
      perMessageDeflate: false,
      maxPayload: engine.options.maxFrameBytes,
      clientTracking: false,
    });
  }

  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', ignoreSocketError);
    if (!this.engine.acceptsConnections) {
      rejectUpgrade(socket, 503, 'server is shutting down');
      return;
    }
    const origin = typeof request.headers.origin === 'string' ? request.headers.origin : undefined;
    const check = this.engine.hooks.checkOrigin;
    if (check === undefined) {
      this.complete(isOriginAllowed(origin, request, this.originPatterns), request, socket, head);
      return;
    }
    Promise.resolve()
      .then(() => check(origin, request))
      .then(
        (allowed) => this.complete(allowed === true, request, socket, head),
        (error: unknown) => {
          this.engine.logger.error({ error: String(error) }, 'checkOrigin failed');
          this.complete(false, request, socket, head);
        },
      );
  }

  attach(server: Server, path: string): void {
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const pathname = (request.url ?? '/').split('?')[0];
      if (pathname === path) this.handleUpgrade(request, socket, head);
      else if (server.listenerCount('upgrade') === 1) rejectUpgrade(socket, 404, 'not found');
    });
  }

  private complete(allowed: boolean, request: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (!allowed) {
      this.engine.logger.info({ origin: request.headers.origin }, 'websocket origin refused');
      rejectUpgrade(socket, 403, 'request origin is not authorized');
      return;
    }
    if (!this.engine.acceptsConnections) {
      rejectUpgrade(socket, 503, 'server is shutting down');
      return;
    }
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      const session = new ClientSession(this.engine, ws, request);
      (ws as SocketWithSession)[SESSION] = session;
      this.engine.trackSession(session);
      ws.on('message', onSocketMessage);
      ws.on('close', onSocketClose);
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

function onSocketClose(this: WebSocket, code: number, reason: Buffer): void {
  const session = sessionOf(this);
  if (session === undefined) return;
  session.onSocketClose(code, reason.toString('utf8'));
  session.engine.forgetSession(session);
}

function onSocketError(this: WebSocket, error: Error): void {
  const session = sessionOf(this);
  if (session !== undefined && session.state !== SessionState.Closed) {
    session.engine.logger.debug({ client: session.id, error: error.message }, 'websocket error');
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
