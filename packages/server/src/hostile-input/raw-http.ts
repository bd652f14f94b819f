import net from 'node:net';

/** One request as bytes on the wire: whatever a client can send, including what `fetch` refuses to. */
export interface RawRequest {
  method: string;
  /** The request target as sent: already percent-encoded (or deliberately not). */
  target: string;
  /** Header lines as given, values as bytes (a Buffer) or latin1 text; `Host` and `Connection` are added. */
  headers?: Array<[string, string | Buffer]>;
  body?: Buffer | string;
  /** Send `Content-Length` (default) or leave the length out. */
  contentLength?: boolean;
}

export interface RawResponse {
  /** The status code, or 0 when the connection ended without a status line (a reset, a timeout). */
  status: number;
  headers: Map<string, string>;
  /** The body as far as it arrived (a stream is cut after `streamGraceMs`), de-chunked. */
  body: string;
  /** Why there was no status, when there was none. */
  failure?: string;
}

/**
 * Sends one request on a fresh connection (`Connection: close`) and reads the answer: the status line and headers,
 * then the body until the server closes, or — for a response that streams (HTTP-streaming, SSE) — for at most
 * `streamGraceMs` after the headers. Never waits longer than `timeoutMs` in all.
 */
export function rawRequest(
  port: number,
  request: RawRequest,
  options: { timeoutMs?: number; streamGraceMs?: number } = {},
): Promise<RawResponse> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const streamGraceMs = options.streamGraceMs ?? 1_000;
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  const lines = [`${request.method} ${request.target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
  const head: Buffer[] = [];
  for (const line of lines) head.push(Buffer.from(`${line}\r\n`, 'latin1'));
  for (const [name, value] of request.headers ?? []) {
    head.push(
      Buffer.concat([Buffer.from(`${name}: `, 'latin1'), Buffer.from(value as string, 'latin1'), CRLF]),
    );
  }
  if (body !== undefined && request.contentLength !== false)
    head.push(Buffer.from(`Content-Length: ${body.length}\r\n`, 'latin1'));
  head.push(CRLF);
  const bytes = Buffer.concat(body === undefined ? head : [...head, body]);

  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let settled = false;
    let streamTimer: NodeJS.Timeout | undefined;
    // Written, not ended: a half-closed client is one the server may stop answering (a file still streaming).
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    const finish = (failure?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(streamTimer);
      socket.destroy();
      resolve(parseResponse(Buffer.concat(chunks), failure));
    };
    const deadline = setTimeout(() => finish('timed out'), timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const received = Buffer.concat(chunks);
      const end = received.indexOf(HEAD_END);
      if (end === -1) return;
      // The whole answer is in, though the server keeps the connection (a stream that ended, keep-alive).
      if (isComplete(received.subarray(0, end).toString('latin1'), received.subarray(end + 4)))
        return finish();
      // Headers are in: a body that never ends (a stream) is read a little longer, then cut.
      streamTimer ??= setTimeout(() => finish(), streamGraceMs);
    });
    socket.on('error', (err) => finish(err.message));
    socket.on('close', () => finish());
  });
}

/** A slow client: what it sent at once, then one byte at a time, and how the server ended it. */
export interface TrickleResponse extends RawResponse {
  /** The server closed the connection (rather than the client giving up at `timeoutMs`). */
  closedByServer: boolean;
}

/**
 * Sends `start` on a fresh connection, then `trickle` (one byte; none for a silent client until the server ends
 * its side) every `everyMs` for as long as the connection is writable — a client that never finishes its request
 * and never closes its side, whatever the server answers (it keeps writing after a response, and never
 * half-closes) — until the server closes the connection or `timeoutMs` passes. `from` is the local address to connect from (any 127.0.0.0/8 address reaches a server on 127.0.0.1).
 */
export function trickleRequest(
  port: number,
  plan: { start: Buffer | string; trickle: string; everyMs: number; from?: string },
  options: { timeoutMs?: number } = {},
): Promise<TrickleResponse> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let settled = false;
    const socket = net.connect(
      { port, host: '127.0.0.1', localAddress: plan.from, allowHalfOpen: true },
      () => socket.write(plan.start),
    );
    // After the server's FIN, bytes keep coming (a silent client too): only a server that destroyed the socket
    // makes them fail, which is how the client learns the connection is really gone.
    let serverEnded = false;
    socket.once('end', () => {
      serverEnded = true;
    });
    const trickle = setInterval(() => {
      if (socket.writable) socket.write(serverEnded ? plan.trickle || 'x' : plan.trickle);
    }, plan.everyMs);
    const finish = (closedByServer: boolean, failure?: string) => {
      if (settled) return;
      settled = true;
      clearInterval(trickle);
      clearTimeout(deadline);
      socket.destroy();
      resolve({ ...parseResponse(Buffer.concat(chunks), failure), closedByServer });
    };
    const deadline = setTimeout(() => finish(false, 'timed out'), timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // A reset from the server (it destroyed the socket while bytes were still coming) closes it all the same.
    socket.on('error', () => undefined);
    socket.on('close', () => finish(true));
  });
}

const CRLF = Buffer.from('\r\n', 'latin1');
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');

/** Whether `body` is all of the response whose head is `head` (by its length, or the last chunk of a chunked one). */
function isComplete(head: string, body: Buffer): boolean {
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (length) return body.length >= Number(length[1]);
  if (/\r\ntransfer-encoding:[^\r]*chunked/i.test(head))
    return (
      body.equals(LAST_CHUNK) || body.subarray(-LAST_CHUNK.length - 2).equals(Buffer.from('\r\n0\r\n\r\n'))
    );
  return false;
}

const LAST_CHUNK = Buffer.from('0\r\n\r\n', 'latin1');

function parseResponse(raw: Buffer, failure: string | undefined): RawResponse {
  const end = raw.indexOf(HEAD_END);
  const headText = (end === -1 ? raw : raw.subarray(0, end)).toString('latin1');
  const [statusLine = '', ...headerLines] = headText.split('\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  const headers = new Map<string, string>();
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const rest = end === -1 ? Buffer.alloc(0) : raw.subarray(end + 4);
  const body = headers.get('transfer-encoding')?.includes('chunked') ? dechunk(rest) : rest;
  return {
    status: match ? Number(match[1]) : 0,
    headers,
    body: body.toString('utf8'),
    ...(match ? {} : { failure: failure ?? `no status line (${raw.length} bytes)` }),
  };
}

/** A chunked body as far as it arrived. */
function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < data.length) {
    const lineEnd = data.indexOf(CRLF, at);
    if (lineEnd === -1) break;
    const size = Number.parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(data.subarray(lineEnd + 2, Math.min(lineEnd + 2 + size, data.length)));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}
