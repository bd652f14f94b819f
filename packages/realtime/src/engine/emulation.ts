import type { IncomingMessage, ServerResponse } from 'node:http';
import { decodeProtobufEmulationRequest, ProtobufDecodeError } from '../protocol/protobuf.ts';
import { JSON_CODEC, PROTOBUF_CODEC, type SessionCodec } from './codecs.ts';
import { dispatchCommand } from './commands.ts';
import { HttpStreamTransport, SseTransport } from './http-transports.ts';
import { OriginPolicy } from './origin.ts';
import { ClientSession, disconnectSessions } from './session.ts';
import type { SessionHost } from './session-host.ts';
import type { SessionTransport } from './transport.ts';

/**
 * Bidirectional emulation (docs/protocol.md "Bidirectional emulation"), Centrifugo's answer to networks that block
 * WebSocket: the client opens an HTTP-streaming (`POST /connection/http_stream`) or SSE (`GET /connection/sse`)
 * response that carries every reply and push, and sends its later commands as `POST /emulation` requests naming its
 * session and the node that holds it. A request that lands on another node reaches the session through the broker's
 * control channel (`RemoteEmulation`), as Centrifugo routes it to the session's node.
 */

/** How an emulation request for another node's session went. */
export type RemoteDelivery = 'delivered' | 'unknown_node' | 'failed';

/** Delivers `/emulation` data to a session on another node (the cluster, over the broker's control channel). */
export interface RemoteEmulation {
  deliver(node: string, session: string, data: Buffer): Promise<RemoteDelivery>;
}

/** Centrifugo answers 499 when the client went away while the body was read. */
const CLIENT_CLOSED_REQUEST = 499;

class BodyTooLarge extends Error {}

async function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new BodyTooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function isProtobufBody(request: IncomingMessage): boolean {
  return request.headers['content-type'] === 'application/octet-stream';
}

/** Ends a request with a bare status (and the CORS headers already set). */
function status(response: ServerResponse, code: number): void {
  response.writeHead(code);
  response.end();
}

/**
 * Accepts HTTP-streaming and SSE connections and routes `/emulation` requests to their sessions. Sessions are kept
 * by their session id from connect until their response ends.
 */
export class EmulationAcceptor {
  /** Open emulation sessions by session id (`ConnectResult.session`). */
  readonly sessions = new Map<string, ClientSession>();
  private readonly originPolicy: OriginPolicy;

  constructor(
    private readonly host: SessionHost,
    private readonly nodeId: string,
    private readonly accepting: () => boolean,
    private readonly remote: RemoteEmulation,
  ) {
    this.originPolicy = new OriginPolicy(host.options.allowedOrigins, host, host.logger);
  }

  /** Serves one of the emulation paths; false when the request is for something else. */
  async handle(request: IncomingMessage, response: ServerResponse): Promise<boolean> {
    const { options } = this.host;
    const path = (request.url ?? '/').split('?')[0];
    if (options.httpStream && path === options.httpStreamPath)
      await this.openStream(request, response, 'http_stream');
    else if (options.sse && path === options.ssePath) await this.openStream(request, response, 'sse');
    else if ((options.httpStream || options.sse) && path === options.emulationPath) {
      await this.emulate(request, response);
    } else return false;
    return true;
  }

  /** Delivers commands to a session of this node; false when there is no such session (any more). */
  deliverLocal(sessionId: string, data: Buffer): boolean {
    const session = this.sessions.get(sessionId);
    if (session === undefined) return false;
    session.onFrame(data);
    return true;
  }

  /** Closes every emulation connection with `code`, then drops those still open after `timeoutMs`. */
  disconnectAll(code: number, reason: string | undefined, timeoutMs: number): Promise<void> {
    return disconnectSessions(this.sessions, code, reason, timeoutMs);
  }

  /**
   * CORS for browsers on other origins: an origin the policy admits is echoed; preflights (`OPTIONS`) are answered
   * here. Returns false (403 sent) when the origin is refused.
   */
  private async admitOrigin(request: IncomingMessage, response: ServerResponse): Promise<boolean> {
    if (!(await this.originPolicy.admits(request))) {
      this.host.logger.info({ origin: request.headers.origin }, 'emulation origin refused');
      response.writeHead(403, { 'Content-Type': 'text/plain' });
      response.end('request origin is not authorized');
      return false;
    }
    const origin = request.headers.origin;
    if (typeof origin === 'string') {
      response.setHeader('Access-Control-Allow-Origin', origin);
      response.setHeader('Access-Control-Allow-Credentials', 'true');
      response.setHeader('Vary', 'Origin');
    }
    return true;
  }

  private preflight(request: IncomingMessage, response: ServerResponse): void {
    response.setHeader('Access-Control-Max-Age', '300');
    response.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
    const wanted = request.headers['access-control-request-headers'];
    response.setHeader('Access-Control-Allow-Headers', typeof wanted === 'string' ? wanted : 'content-type');
    status(response, 204);
  }

  private async openStream(
    request: IncomingMessage,
    response: ServerResponse,
    kind: 'http_stream' | 'sse',
  ): Promise<void> {
    if (!(await this.admitOrigin(request, response))) return;
    if (request.method === 'OPTIONS') return this.preflight(request, response);
    if (!this.accepting()) return status(response, 503);
    let body: Buffer;
    if (request.method === 'POST') {
      try {
        body = await readBody(request, this.host.options.emulationMaxRequestBytes);
      } catch (error) {
        return status(response, error instanceof BodyTooLarge ? 413 : CLIENT_CLOSED_REQUEST);
      }
    } else if (kind === 'sse' && request.method === 'GET') {
      // Browsers open SSE with GET: the connect command rides in the `cf_connect` query parameter.
      const connect = new URL(request.url ?? '/', 'http://localhost').searchParams.get('cf_connect');
      if (!connect) return status(response, 400);
      body = Buffer.from(connect);
    } else {
      response.setHeader('Allow', kind === 'sse' ? 'GET, POST, OPTIONS' : 'POST, OPTIONS');
      return status(response, 405);
    }
    // SSE carries text only; HTTP-streaming is Protobuf when the client posts binary.
    const codec: SessionCodec =
      kind === 'http_stream' && isProtobufBody(request) ? PROTOBUF_CODEC : JSON_CODEC;
    const transport: SessionTransport =
      kind === 'sse'
        ? new SseTransport(response)
        : new HttpStreamTransport(response, codec === PROTOBUF_CODEC);
    response.writeHead(200, {
      'Content-Type':
        kind === 'sse'
          ? 'text/event-stream; charset=utf-8'
          : codec === PROTOBUF_CODEC
            ? 'application/octet-stream'
            : 'application/json',
      'Cache-Control': 'private, no-cache, no-store, must-revalidate, max-age=0',
      Pragma: 'no-cache',
      Expires: '0',
      // Tells nginx-like proxies not to buffer the stream.
      'X-Accel-Buffering': 'no',
      ...(request.httpVersionMajor === 1 ? { Connection: 'keep-alive' } : {}),
    });
    // An SSE stream starts with a line break so that proxies and the browser see the response begin at once.
    if (kind === 'sse') response.write('\r\n');
    else response.flushHeaders();
    const session = new ClientSession(this.host, dispatchCommand, transport, codec, request);
    const sessionId = session.sessionId!;
    this.sessions.set(sessionId, session);
    response.on('close', () => {
      this.sessions.delete(sessionId);
      session.onSocketClose(3000, 'connection closed');
    });
    session.onFrame(body);
  }

  /** `POST /emulation`: `{node, session, data}` (JSON, `data` a string of commands) or a Protobuf EmulationRequest. */
  private async emulate(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!(await this.admitOrigin(request, response))) return;
    if (request.method === 'OPTIONS') return this.preflight(request, response);
    if (request.method !== 'POST') {
      response.setHeader('Allow', 'POST, OPTIONS');
      return status(response, 405);
    }
    let body: Buffer;
    try {
      body = await readBody(request, this.host.options.emulationMaxRequestBytes);
    } catch (error) {
      return status(response, error instanceof BodyTooLarge ? 413 : CLIENT_CLOSED_REQUEST);
    }
    const parsed = parseEmulationRequest(body, isProtobufBody(request));
    if (parsed === undefined) return status(response, 400);
    if (parsed.node === this.nodeId) {
      // A session that ended meanwhile is not an error: its stream has ended too (Centrifugo answers 204).
      this.deliverLocal(parsed.session, parsed.data);
      return status(response, 204);
    }
    const outcome = await this.remote.deliver(parsed.node, parsed.session, parsed.data);
    status(response, outcome === 'delivered' ? 204 : outcome === 'unknown_node' ? 404 : 500);
  }
}

function parseEmulationRequest(
  body: Buffer,
  protobuf: boolean,
): { node: string; session: string; data: Buffer } | undefined {
  if (protobuf) {
    try {
      return decodeProtobufEmulationRequest(body);
    } catch (error) {
      if (error instanceof ProtobufDecodeError) return undefined;
      throw error;
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  const { node, session, data } = (value ?? {}) as { node?: unknown; session?: unknown; data?: unknown };
  if (typeof node !== 'string' || typeof session !== 'string' || typeof data !== 'string') return undefined;
  return { node, session, data: Buffer.from(data) };
}
