import type { ServerResponse } from 'node:http';
import { type EncodedFrame, frameBytes, type SessionTransport } from './transport.ts';

/**
 * The server-to-client half of bidirectional emulation (docs/protocol.md "Bidirectional emulation"): a streamed HTTP
 * response per connection. Commands come separately by `/emulation`, so there is no input to pause; the response's
 * unsent bytes count towards the slow-consumer limit like a socket's.
 */
abstract class ResponseTransport implements SessionTransport {
  abstract readonly name: 'http_stream' | 'sse';
  readonly emulation = true;

  constructor(protected readonly response: ServerResponse) {}

  isOpen(): boolean {
    return !this.response.writableEnded && !this.response.destroyed;
  }

  bufferedAmount(): number {
    return this.response.writableLength;
  }

  abstract write(frames: EncodedFrame[]): void;

  writeOne(frame: EncodedFrame): void {
    this.write([frame]);
  }

  /** The disconnect push goes out as the last data, then the response ends (the client reads the code from it). */
  close(_code: number, _reason: string, push: () => EncodedFrame): void {
    if (!this.isOpen()) return;
    this.write([push()]);
    this.response.end();
  }

  terminate(): void {
    this.response.destroy();
  }

  pauseInput(): void {}

  resumeInput(): void {}
}

const NEWLINE = Buffer.from('\n');

/**
 * HTTP-streaming: JSON replies each followed by a newline (the client splits the stream into lines), or
 * length-delimited Protobuf replies back to back.
 */
export class HttpStreamTransport extends ResponseTransport {
  readonly name = 'http_stream' as const;

  constructor(
    response: ServerResponse,
    private readonly binary: boolean,
  ) {
    super(response);
  }

  write(frames: EncodedFrame[]): void {
    const parts: Buffer[] = [];
    for (const frame of frames) {
      parts.push(frameBytes(frame));
      if (!this.binary) parts.push(NEWLINE);
    }
    this.response.write(parts.length === 1 ? parts[0] : Buffer.concat(parts));
  }
}

const DATA_PREFIX = Buffer.from('data: ');
const EVENT_END = Buffer.from('\n\n');

/** Server-sent events (JSON only): one `data:` event per reply, as Centrifugo writes them. */
export class SseTransport extends ResponseTransport {
  readonly name = 'sse' as const;

  write(frames: EncodedFrame[]): void {
    const parts: Buffer[] = [];
    for (const frame of frames) parts.push(DATA_PREFIX, frameBytes(frame), EVENT_END);
    this.response.write(Buffer.concat(parts));
  }
}
