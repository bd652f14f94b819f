// A lean HTTP/1.1 load generator for benchmarks whose servers are CPU-bound on a small machine: the generator shares
// the cores with the servers it measures, so every microsecond it spends per request is taken from them. It keeps
// `connections` keep-alive sockets, each with one request in flight (no pipelining, so latency means what a client
// sees), sends one pre-encoded request, and reads `Content-Length`-framed responses. Per request it costs a third
// of autocannon's CPU on this kind of load, with the same figures out (requests, latency percentiles, non-2xx).
import { connect, type Socket } from 'node:net';
import { percentile } from './stats.ts';

export interface LoadOptions {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  /**
   * A fresh body for every request (e.g. a client assertion whose `jti` may be used once), instead of `body`.
   * Encoding it costs this process CPU per request; the server's figures are unaffected.
   */
  nextBody?: () => string;
  /** Headers to add to each request, made fresh for it (e.g. a single-use DPoP proof, RFC 9449 §4). */
  nextHeaders?: () => Record<string, string>;
  connections: number;
  /** Seconds to run. */
  duration: number;
  /** Requests per second across all connections; omitted = as fast as the server answers. */
  overallRate?: number;
}

export interface LoadResult {
  requests: { average: number; total: number };
  /** Milliseconds. */
  latency: { p50: number; p99: number; average: number; max: number };
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Seconds. */
  duration: number;
}

const HEADER_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length: *(\d+)/i;
const CHUNKED = /\r\ntransfer-encoding: *chunked/i;

function encodeRequest(options: LoadOptions): Buffer {
  const url = new URL(options.url);
  const body = Buffer.from(options.body);
  const lines = [
    `${options.method} ${url.pathname}${url.search} HTTP/1.1`,
    `host: ${url.host}`,
    'connection: keep-alive',
    ...Object.entries(options.headers).map(([name, value]) => `${name}: ${value}`),
    `content-length: ${body.length}`,
  ];
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), body]);
}

/** One keep-alive connection: sends when told to, reports each complete response. */
class Connection {
  private readonly socket: Socket;
  private buffered: Buffer = Buffer.alloc(0);
  private sentAt = 0n;
  busy = false;

  constructor(
    port: number,
    host: string,
    private readonly request: () => Buffer,
    private readonly onResponse: (status: number, latencyNs: bigint, connection: Connection) => void,
    private readonly onError: (error: Error) => void,
  ) {
    this.socket = connect({ port, host, noDelay: true });
    this.socket.on('data', (chunk: Buffer) => this.read(chunk));
    this.socket.on('error', (error) => this.onError(error));
  }

  send(): void {
    this.busy = true;
    this.sentAt = process.hrtime.bigint();
    this.socket.write(this.request());
  }

  close(): void {
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const headerEnd = this.buffered.indexOf(HEADER_END);
    if (headerEnd === -1) return;
    const head = this.buffered.toString('latin1', 0, headerEnd);
    const length = CONTENT_LENGTH.exec(head);
    if (!length) {
      const why = CHUNKED.test(head) ? 'chunked responses are not supported' : 'no Content-Length';
      this.onError(new Error(`unreadable response (${why}): ${head.split('\r\n')[0]}`));
      return;
    }
    const end = headerEnd + HEADER_END.length + Number(length[1]);
    if (this.buffered.length < end) return;
    if (this.buffered.length > end) {
      this.onError(new Error('the server sent more than one response to one request'));
      return;
    }
    this.buffered = Buffer.alloc(0);
    this.busy = false;
    // "HTTP/1.1 200 OK": the status code is bytes 9–11.
    this.onResponse(Number(head.slice(9, 12)), process.hrtime.bigint() - this.sentAt, this);
  }
}

/** Runs the load and resolves with its figures; a socket error or malformed response rejects. */
export function runLoad(options: LoadOptions): Promise<LoadResult> {
  const url = new URL(options.url);
  const fixed = encodeRequest(options);
  const { nextBody, nextHeaders } = options;
  const request =
    nextBody || nextHeaders
      ? () =>
          encodeRequest({
            ...options,
            body: nextBody ? nextBody() : options.body,
            headers: nextHeaders ? { ...options.headers, ...nextHeaders() } : options.headers,
          })
      : () => fixed;
  const latenciesUs: number[] = [];
  let ok = 0;
  let non2xx = 0;
  let sent = 0;
  let stopping = false;

  return new Promise((resolve, reject) => {
    const startedAt = process.hrtime.bigint();
    const elapsedS = () => Number(process.hrtime.bigint() - startedAt) / 1e9;
    const connections: Connection[] = [];
    const due = () =>
      options.overallRate === undefined
        ? Number.POSITIVE_INFINITY
        : Math.floor(elapsedS() * options.overallRate);
    const dispatch = (connection: Connection) => {
      if (stopping || sent >= due()) return;
      sent++;
      connection.send();
    };
    const fail = (error: Error) => {
      if (stopping) return;
      finish();
      reject(error);
    };
    const onResponse = (status: number, latencyNs: bigint, connection: Connection) => {
      latenciesUs.push(Number(latencyNs / 1000n));
      if (status >= 200 && status < 300) ok++;
      else non2xx++;
      dispatch(connection);
    };
    // With a target rate, a 1 ms tick hands due requests to idle connections (a connection that is still waiting
    // for its answer is not given a second request).
    const ticker =
      options.overallRate === undefined
        ? undefined
        : setInterval(() => {
            for (const connection of connections) if (!connection.busy) dispatch(connection);
          }, 1);
    const finish = () => {
      stopping = true;
      clearInterval(ticker);
      clearTimeout(timer);
      for (const connection of connections) connection.close();
    };
    const timer = setTimeout(() => {
      const duration = elapsedS();
      finish();
      resolve(summarize(latenciesUs, ok, non2xx, duration));
    }, options.duration * 1000);

    for (let i = 0; i < options.connections; i++) {
      const connection = new Connection(Number(url.port), url.hostname, request, onResponse, fail);
      connections.push(connection);
      dispatch(connection);
    }
  });
}

function summarize(latenciesUs: number[], ok: number, non2xx: number, duration: number): LoadResult {
  const sorted = Float64Array.from(latenciesUs).sort();
  const at = (q: number) => percentile(sorted, q * 100, true);
  const total = sorted.length;
  const sum = sorted.reduce((a, b) => a + b, 0);
  const ms = (us: number) => Math.round(us / 10) / 100;
  return {
    requests: { average: total / duration, total },
    latency: {
      p50: ms(at(0.5)),
      p99: ms(at(0.99)),
      average: total ? sum / total / 1000 : 0,
      max: ms(sorted[total - 1] ?? 0),
    },
    '2xx': ok,
    non2xx,
    errors: 0,
    timeouts: 0,
    duration,
  };
}
