import type { PreframedMessage } from './preframed.ts';

/**
 * How a session reaches its client (docs/protocol.md "Transport"): a WebSocket, or one of the HTTP-streaming and
 * SSE connections of bidirectional emulation, whose commands arrive separately by `/emulation`. The session writes
 * every transport the same way; only framing and closing differ.
 */

/** One encoded reply or push: a JSON line, a length-delimited Protobuf message, or a shared push with its frame. */
export type EncodedFrame = string | Buffer | PreframedMessage;

/** Centrifugo's transport names, as the client and the proxies see them. */
export type TransportName = 'websocket' | 'http_stream' | 'sse';
export type RealtimeTransport = TransportName;

export interface SessionTransport {
  readonly name: TransportName;
  /** Commands come by `/emulation` requests (the connect result then carries `session` and `node`). */
  readonly emulation: boolean;
  /** Whether the connection can take frames now. */
  isOpen(): boolean;
  /** Everything produced for the connection in one event-loop turn, in order. */
  write(frames: EncodedFrame[]): void;
  /** One frame on its own (a shared push with nothing queued before it): `write([frame])` without the array. */
  writeOne(frame: EncodedFrame): void;
  /** Bytes written but not yet taken by the network (slow-consumer limit, docs/protocol.md "Limits"). */
  bufferedAmount(): number;
  /**
   * Ends the connection with a disconnect code: a WebSocket close frame, or for emulation the disconnect push
   * (`push` encodes it) and the end of the response. The push is built only by the transports that send it, so a
   * WebSocket close (the code travels in the close frame) encodes nothing.
   */
  close(code: number, reason: string, push: () => EncodedFrame): void;
  /** Drops the connection without a goodbye. */
  terminate(): void;
  /** Back-pressure on incoming commands (WebSocket only; emulation requests are bounded by their body size). */
  pauseInput(): void;
  resumeInput(): void;
}

/** The JSON text of a frame, for transports that write text (HTTP-streaming and SSE in the JSON protocol). */
export function frameBytes(frame: EncodedFrame): Buffer {
  if (typeof frame === 'string') return Buffer.from(frame);
  return Buffer.isBuffer(frame) ? frame : frame.payload;
}
