import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { AppError } from '../errors/app-error.ts';
import {
  methodNotAllowed,
  PROBLEM_CONTENT_TYPE,
  problemOf,
  routeNotFound,
  toAppError,
  unsafeText,
} from './problem.ts';
import { REQUEST_ID_HEADER, requestIdOf } from './request-id.ts';
import type { RouteMethods } from './route-methods.ts';

/** What Node's `clientError` event passes: the parser's error code and the bytes it had read. */
interface ClientError extends Error {
  code?: string;
  rawPacket?: Buffer | { data?: number[] };
}

/**
 * Fastify's `clientErrorHandler`: requests Node's HTTP parser refuses before Fastify sees them (a header with a NUL
 * byte, an unknown method such as `BREW`, headers over the size limit, a body that stops arriving) still get an
 * RFC 9457 problem with a stable code and an `X-Request-Id`, written straight to the socket, which is then closed.
 */
export function createClientErrorHandler(routes: RouteMethods, logger: Logger) {
  return (error: ClientError, socket: Socket): void => {
    // The peer is gone; there is nobody to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const head = headOf(error.rawPacket);
    const requestId = requestIdOf(head.headers.get(REQUEST_ID_HEADER));
    const problem = problemFor(error, head, routes);
    logger
      .child({ request_id: requestId })
      .info({ res: { statusCode: problem.status }, code: error.code }, 'request refused by the HTTP parser');
    // A response to the request is already under way (the parser failed in a later body chunk): writing another
    // would corrupt it, so only close the connection, as Node itself does.
    if (!socket.writable || responseStarted(socket)) {
      socket.destroy();
      return;
    }
    answerAndClose(socket, problem, requestId);
  };
}

/** How long a refused connection's further bytes are read and dropped before it is destroyed. */
const CLOSE_LINGER_MS = 2_000;

/**
 * Writes `problem` as a whole HTTP/1.1 response straight to `socket` and closes it for good. The socket is not
 * destroyed at once: bytes the peer sent and nobody read would make the close a TCP reset, which can discard the
 * answer before the peer reads it (RFC 9112 §9.6), so what still arrives is read and dropped until the peer closes
 * too, or for CLOSE_LINGER_MS at most — then the socket is destroyed whatever the peer does (a client trickling
 * bytes into a half-closed socket would otherwise hold it for ever).
 */
export function answerAndClose(socket: Socket, problem: AppError, requestId: string): void {
  socket.on('error', ignore);
  if (socket.destroyed) return;
  const body = JSON.stringify(problemOf(problem, undefined, requestId));
  const headers = [
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? 'Error'}`,
    `Content-Type: ${PROBLEM_CONTENT_TYPE}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    ...Object.entries(problem.headers).map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
  ];
  if (socket.writable) socket.end(`${headers.join('\r\n')}\r\n\r\n${body}`);
  closeAfterLinger(socket);
}

/** Stops writing, drops what still arrives, and destroys the socket when the peer closes or CLOSE_LINGER_MS passed. */
export function closeAfterLinger(socket: Socket): void {
  socket.on('error', ignore);
  if (socket.destroyed) return;
  if (socket.writable) socket.end();
  const timer = setTimeout(() => socket.destroy(), CLOSE_LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.once('end', () => socket.destroy());
  // Flowing without a parser: further bytes are read and dropped (an HTTP parser still attached reads them too).
  socket.resume();
}

const ignore = () => undefined;

function problemFor(error: ClientError, head: RequestHead, routes: RouteMethods): AppError {
  if (head.nul) return unsafeText(head.nul.part, head.nul.field);
  if (error.code === 'HPE_INVALID_METHOD' && head.method && head.path) {
    // Same answer as for a method Node knows (src/http/edge.ts): 405 where the path exists, else 404.
    const allowed = routes.allowedFor(head.path);
    return allowed.length > 0
      ? methodNotAllowed(head.method, allowed)
      : routeNotFound(head.method, head.path);
  }
  return toAppError(error) ?? new AppError(400, 'malformed_request', 'The request is not valid HTTP/1.1.');
}

interface RequestHead {
  method?: string;
  path?: string;
  headers: Map<string, string>;
  /** Where a NUL byte was found: the request target or a header. */
  nul?: { part: 'params' | 'querystring' | 'headers'; field: string };
}

/** The request line and headers as far as the parser had read them (latin1: one character per byte). */
function headOf(raw: ClientError['rawPacket']): RequestHead {
  const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(raw?.data ?? []);
  const text = bytes.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const [requestLine = '', ...headerLines] = (end === -1 ? text : text.slice(0, end)).split('\r\n');
  const head: RequestHead = { headers: new Map() };
  const line = /^([^ ]+) ([^ ]+) HTTP\/\d\.\d$/.exec(requestLine);
  if (line) [head.method, head.path] = [line[1]!.replace(/\0/g, '\uFFFD'), line[2]!.split('?')[0]];
  if (requestLine.includes('\0')) {
    const query = requestLine.indexOf('?');
    const inQuery = query !== -1 && requestLine.indexOf('\0') > query;
    head.nul = inQuery
      ? { part: 'querystring', field: '(querystring)' }
      : { part: 'params', field: '(path)' };
  }
  for (const headerLine of headerLines) {
    const colon = headerLine.indexOf(':');
    const name = (colon === -1 ? headerLine : headerLine.slice(0, colon)).trim().toLowerCase();
    if (headerLine.includes('\0')) {
      head.nul ??= { part: 'headers', field: name.replace(/\0/g, '\uFFFD') };
    } else if (colon !== -1 && !head.headers.has(name)) {
      head.headers.set(name, headerLine.slice(colon + 1).trim());
    }
  }
  return head;
}

/** Node keeps the response of the request being served on the socket until it is finished. */
function responseStarted(socket: Socket): boolean {
  const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  return current?.headersSent === true;
}
