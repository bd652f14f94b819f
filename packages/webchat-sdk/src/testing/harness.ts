import WebSocket from 'ws';
import type { FetchLike } from '../rest-client.ts';
import { memoryStorage } from '../session-storage.ts';
import { createWebchat, type Webchat, type WebchatOptions } from '../webchat.ts';

/**
 * Test-only observation of what the SDK does on the wire: a fetch that records each REST call (and lets a test
 * replace one answer), and a `ws` subclass that records each protocol command frame and can drop the connection
 * after a chosen frame. Both pass every byte through to the real server.
 */
export interface WireEvent {
  kind: 'rest' | 'send' | 'receive';
  /** `POST /sdk/v1/conversations` for REST; the command or push name for frames (`connect`, `subscribe`, …). */
  what: string;
  headers?: Record<string, string>;
  body?: unknown;
  frame?: Record<string, unknown>;
}

export class Wire {
  readonly events: WireEvent[] = [];
  /** Rewrites a REST answer body before the SDK sees it (e.g. to hand it an expiring token). */
  rewriteResponse:
    | ((what: string, body: Record<string, unknown>) => Record<string, unknown> | undefined)
    | null = null;
  /** While true, new WebSocket connections fail at once (the network is down). */
  offline = false;
  /** How many connections were tried (and failed) while `offline`: a test waits for one instead of sleeping. */
  offlineAttempts = 0;
  /** Called for each command frame sent; return 'close' to close the socket right after sending it. */
  onSend: ((command: Record<string, unknown>) => 'close' | undefined) | null = null;
  /**
   * Rewrites (or, returning null, drops) a frame the server sent before the client reads it — a fault in transit,
   * e.g. a broadcast lost and the publish reply turned into the temporary error a server answers while its broker
   * is down.
   */
  rewriteReceived: ((frame: Record<string, unknown>) => Record<string, unknown> | null) | null = null;
  private readonly sockets = new Set<WebSocket>();

  readonly fetch: FetchLike = async (input, init) => {
    const url = new URL(input);
    const what = `${init?.method ?? 'GET'} ${url.pathname}`;
    const headers = Object.fromEntries(Object.entries((init?.headers ?? {}) as Record<string, string>));
    const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    this.events.push({ kind: 'rest', what, headers, body });
    const response = await globalThis.fetch(input, init);
    if (!this.rewriteResponse || !response.ok) return response;
    const original = (await response.json()) as Record<string, unknown>;
    const rewritten = this.rewriteResponse(what, original) ?? original;
    return new Response(JSON.stringify(rewritten), { status: response.status, headers: response.headers });
  };

  /** A WebSocket constructor for the centrifuge `websocket` option. */
  readonly WebSocket = this.socketClass();

  /** Drops every open connection as a network failure would (the client sees the transport close). */
  dropConnections(): void {
    for (const socket of this.sockets) socket.terminate();
  }

  rest(): string[] {
    return this.events.filter((e) => e.kind === 'rest').map((e) => e.what);
  }

  sent(name: string): Array<Record<string, unknown>> {
    return this.events.filter((e) => e.kind === 'send' && e.what === name).map((e) => e.frame!);
  }

  /** The timeline of REST calls and sent command names, e.g. for checking the setup order. */
  timeline(): string[] {
    return this.events
      .filter((e) => e.kind !== 'receive')
      .map((e) => (e.kind === 'rest' ? e.what : `ws ${e.what}`));
  }

  private socketClass(): typeof WebSocket {
    const wire = this;
    return class RecordingWebSocket extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(wire.offline ? 'ws://127.0.0.1:9/offline' : address, protocols);
        if (wire.offline) this.on('close', () => wire.offlineAttempts++);
        wire.sockets.add(this);
        this.on('close', () => wire.sockets.delete(this));
        this.on('message', (data) => {
          for (const frame of frames(String(data)))
            wire.events.push({ kind: 'receive', what: frameName(frame), frame });
        });
      }

      override emit(event: string | symbol, ...args: unknown[]): boolean {
        if (event === 'message' && wire.rewriteReceived) {
          const rewrite = wire.rewriteReceived;
          const kept = frames(String(args[0]))
            .map(rewrite)
            .filter((frame) => frame !== null);
          if (kept.length === 0) return true;
          return super.emit(event, Buffer.from(kept.map((frame) => JSON.stringify(frame)).join('\n')), false);
        }
        return super.emit(event, ...args);
      }

      override send(data: unknown, ...rest: unknown[]): void {
        let close = false;
        for (const frame of frames(String(data))) {
          wire.events.push({ kind: 'send', what: frameName(frame), frame });
          if (wire.onSend?.(frame) === 'close') close = true;
        }
        (super.send as (...args: unknown[]) => void)(data, ...rest);
        if (close) this.close(4000, 'test drops the connection');
      }
    } as unknown as typeof WebSocket;
  }
}

/** The Centrifugo JSON protocol batches commands and replies as newline-separated JSON objects. */
function frames(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        return { unparsed: line };
      }
    });
}

const COMMANDS = [
  'connect',
  'subscribe',
  'unsubscribe',
  'publish',
  'refresh',
  'sub_refresh',
  'history',
  'presence',
  'rpc',
  'send',
];

function frameName(frame: Record<string, unknown>): string {
  for (const name of COMMANDS) if (name in frame) return name;
  if ('push' in frame) {
    const push = frame.push as Record<string, unknown>;
    return `push:${Object.keys(push).find((k) => k !== 'channel') ?? 'unknown'}`;
  }
  if ('error' in frame) return `error:${(frame.error as { code?: number }).code}`;
  if (Object.keys(frame).length === 0) return 'ping';
  return 'reply';
}

/** Resolves when `check` returns a value, polling every 20 ms; rejects after `timeoutMs` (generous for a busy CI). */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | null,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Fast reconnects, so tests that drop connections stay quick (the SDK's defaults are seconds). */
export const FAST_RECONNECT = { minReconnectDelay: 50, maxReconnectDelay: 300 } as const;

/**
 * The SDK sessions one test file opens against its test server: each starts over a recording {@link Wire} with
 * in-memory session storage, and `closeAll` (in the file's `after`, before the server closes) ends them all.
 * `defaults` is read at each start, because the server (its `baseUrl`) only exists once `before` ran.
 */
export class TestWebchats {
  private readonly open: Webchat[] = [];

  constructor(
    private readonly defaults: () => Pick<WebchatOptions, 'baseUrl' | 'companyId'> & Partial<WebchatOptions>,
  ) {}

  async start(wire = new Wire(), options: Partial<WebchatOptions> = {}): Promise<Webchat> {
    const chat = await createWebchat({
      storage: memoryStorage(),
      websocket: wire.WebSocket,
      fetch: wire.fetch,
      ...this.defaults(),
      ...options,
    });
    this.open.push(chat);
    return chat;
  }

  closeAll(): void {
    for (const chat of this.open) chat.close();
  }
}
