import type { WebSocket } from 'ws';
import * as wsModule from 'ws';

/**
 * Pre-framed text messages: the one place the engine reaches into `ws` internals.
 *
 * Why: in a fan-out most of the CPU goes into writing one publication to each subscriber. `ws.send` frames the
 * payload again for every socket (header allocation, option object, a corked two-part write). A publication push
 * is the same bytes for every subscriber of a channel, so the hub builds the complete unmasked WebSocket frame
 * once (RFC 6455 §5.2; servers never mask, §5.1) and each socket gets a single `socket.write` of that shared
 * `Buffer` — what socket.io does through engine.io (`ws._sender.sendFrame`).
 *
 * Checked against ws 8.23.0 (`ws/lib/sender.js`, `ws/lib/websocket.js`):
 * - `Sender.frame(data, { fin, opcode, mask, readOnly, rsv1 })` returns `[header, data]` when unmasked; it is
 *   exported by the ESM wrapper as `Sender` (the default `WebSocket` export has no `Sender` property in ESM);
 * - `ws._sender.sendFrame(list, cb)` writes the list to the socket as is;
 * - the sender serialises messages through `_state` (0 = idle) and `_queue`: while it deflates or reads a Blob,
 *   later sends wait in `_queue`, so writing around it would reorder messages;
 * - `ws.bufferedAmount` is `socket._writableState.length + sender._bufferedBytes`, so bytes written through
 *   `sendFrame` count towards the slow-consumer limit exactly like `ws.send`.
 *
 * Fallback: when any of this is missing (a `ws` upgrade changed its shape) or does not hold for a socket
 * (permessage-deflate negotiated, not open, not a server socket, the sender busy or queueing), the payload goes
 * through the public `ws.send`. `preframed.test.ts` fails if the shape changes, so the fast path is not lost
 * silently.
 */

/** RFC 6455 §5.2 opcodes of a text frame (JSON protocol) and a binary frame (Protobuf protocol). */
const TEXT_OPCODE = 1;
const BINARY_OPCODE = 2;
const OPEN = 1;
/** `Sender` state meaning "nothing in progress" (`ws/lib/sender.js` DEFAULT). */
const SENDER_IDLE = 0;

interface FrameOptions {
  fin: boolean;
  opcode: number;
  mask: boolean;
  readOnly: boolean;
  rsv1: boolean;
}

interface SenderStatic {
  frame(data: Buffer, options: FrameOptions): Buffer[];
}

/** The private parts of ws 8.x this module relies on. */
interface SenderInternals {
  _state: number;
  _queue: unknown[];
  _firstFragment: boolean;
  sendFrame(list: Buffer[], cb?: (error?: Error) => void): void;
}

interface WebSocketInternals {
  _sender: SenderInternals | null;
  _isServer: boolean;
  _extensions: Record<string, unknown>;
}

const sender = (wsModule as unknown as { Sender?: SenderStatic }).Sender;

/** Whether the installed `ws` exposes what the fast path needs; checked once at load. */
export const preframingSupported: boolean =
  typeof sender?.frame === 'function' &&
  typeof (sender as unknown as { prototype?: Partial<SenderInternals> }).prototype?.sendFrame === 'function';

function frameOptions(opcode: number): FrameOptions {
  return { fin: true, opcode, mask: false, readOnly: false, rsv1: false };
}
const TEXT_FRAME_OPTIONS = frameOptions(TEXT_OPCODE);
const BINARY_FRAME_OPTIONS = frameOptions(BINARY_OPCODE);
/** `ws.send` options of the fallback path, shared rather than built per message. */
const TEXT_MESSAGE = { binary: false } as const;
const BINARY_MESSAGE = { binary: true } as const;

/**
 * One message with its payload (for batching with other output, or for a transport other than WebSocket) and,
 * when supported, its whole WebSocket frame: text for the JSON protocol, binary for Protobuf.
 */
export class PreframedMessage {
  /** `frame` as the list `sendFrame` takes, built once: `sendFrame` only reads it, so every socket shares it. */
  readonly frameList: Buffer[] | undefined;

  constructor(
    readonly payload: Buffer,
    readonly frame: Buffer | undefined,
    readonly binary: boolean,
  ) {
    this.frameList = frame === undefined ? undefined : [frame];
  }
}

/** Builds the unmasked, unfragmented, uncompressed text frame of `payload` once, for any number of sockets. */
export function preframeText(payload: Buffer): PreframedMessage {
  if (!preframingSupported) return new PreframedMessage(payload, undefined, false);
  return new PreframedMessage(payload, Buffer.concat(sender!.frame(payload, TEXT_FRAME_OPTIONS)), false);
}

/** The binary-frame counterpart of `preframeText` (Protobuf protocol). */
export function preframeBinary(payload: Buffer): PreframedMessage {
  if (!preframingSupported) return new PreframedMessage(payload, undefined, true);
  return new PreframedMessage(payload, Buffer.concat(sender!.frame(payload, BINARY_FRAME_OPTIONS)), true);
}

/** RFC 6455 §5.2: a 7-bit length up to 125, else 126 and 16 bits, else 127 and 64 bits. */
function headerLength(payloadBytes: number): number {
  return payloadBytes < 126 ? 2 : payloadBytes < 65_536 ? 4 : 10;
}

/** Writes the header of an unmasked (§5.1: servers never mask), final, uncompressed frame; returns its length. */
function writeHeader(frame: Buffer, opcode: number, payloadBytes: number): number {
  frame[0] = 0x80 | opcode;
  if (payloadBytes < 126) {
    frame[1] = payloadBytes;
    return 2;
  }
  if (payloadBytes < 65_536) {
    frame[1] = 126;
    frame.writeUInt16BE(payloadBytes, 2);
    return 4;
  }
  frame[1] = 127;
  frame.writeUInt32BE(Math.floor(payloadBytes / 2 ** 32), 2);
  frame.writeUInt32BE(payloadBytes >>> 0, 6);
  return 10;
}

/**
 * The text frame of a JSON string, encoded straight into the frame's buffer: one allocation and one copy, where
 * `Buffer.from` then `preframeText` take two of each (a burst encodes every streamed envelope this way). The
 * payload is a view into the frame.
 */
export function preframeString(text: string): PreframedMessage {
  if (!preframingSupported) return new PreframedMessage(Buffer.from(text), undefined, false);
  const bytes = Buffer.byteLength(text);
  const header = headerLength(bytes);
  const frame = Buffer.allocUnsafe(header + bytes);
  writeHeader(frame, TEXT_OPCODE, bytes);
  frame.write(text, header, 'utf8');
  return new PreframedMessage(frame.subarray(header), frame, false);
}

const NEWLINE = 0x0a;

/**
 * Writes one message made of `parts` — JSON lines joined by a single `\n`, or length-delimited Protobuf messages
 * one after another (docs/protocol.md "Frames") — as a single frame in a single socket write: `ws.send` corks the
 * socket and writes its header and payload as two buffers (`writev`), and a batch of several replies and pushes
 * would first be joined into a payload of its own. Falls back to `ws.send` where `sendPreframed` would.
 */
export function sendParts(ws: WebSocket, parts: ReadonlyArray<string | Buffer>, binary: boolean): void {
  const separators = binary ? 0 : parts.length - 1;
  if (!preframingSupported || !canWriteFrame(ws)) {
    ws.send(joinParts(parts, binary), binary ? BINARY_MESSAGE : TEXT_MESSAGE);
    return;
  }
  let bytes = separators;
  const lengths = new Array<number>(parts.length);
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    lengths[i] = typeof part === 'string' ? Buffer.byteLength(part) : part.length;
    bytes += lengths[i]!;
  }
  const frame = Buffer.allocUnsafe(headerLength(bytes) + bytes);
  let offset = writeHeader(frame, binary ? BINARY_OPCODE : TEXT_OPCODE, bytes);
  for (let i = 0; i < parts.length; i++) {
    if (i > 0 && !binary) frame[offset++] = NEWLINE;
    const part = parts[i]!;
    if (typeof part === 'string') frame.write(part, offset, 'utf8');
    else part.copy(frame, offset);
    offset += lengths[i]!;
  }
  (ws as unknown as WebSocketInternals)._sender!.sendFrame([frame]);
}

/** The payload of `parts` for `ws.send`: lines joined by `\n`, or Protobuf messages concatenated. */
function joinParts(parts: ReadonlyArray<string | Buffer>, binary: boolean): string | Buffer {
  if (parts.length === 1) return parts[0]!;
  if (!binary && parts.every((part) => typeof part === 'string')) return parts.join('\n');
  const buffers: Buffer[] = [];
  for (const part of parts) {
    if (!binary && buffers.length > 0) buffers.push(Buffer.of(NEWLINE));
    buffers.push(typeof part === 'string' ? Buffer.from(part) : part);
  }
  return Buffer.concat(buffers);
}

/** Whether the prebuilt frame can go straight to this socket without reordering or skipping an extension. */
function canWriteFrame(ws: WebSocket): boolean {
  if (ws.readyState !== OPEN) return false;
  const internals = ws as unknown as WebSocketInternals;
  const s = internals._sender;
  return (
    internals._isServer === true &&
    s != null &&
    s._state === SENDER_IDLE &&
    s._queue.length === 0 &&
    s._firstFragment === true &&
    // No extension may have been negotiated: permessage-deflate would need RSV1 and compressed data (RFC 7692).
    hasNoKeys(internals._extensions)
  );
}

function hasNoKeys(record: Record<string, unknown>): boolean {
  for (const _ in record) return false;
  return true;
}

/** Writes the message as one frame: the prebuilt frame when safe, otherwise through `ws.send`. */
export function sendPreframed(ws: WebSocket, message: PreframedMessage): void {
  if (message.frameList !== undefined && canWriteFrame(ws)) {
    (ws as unknown as WebSocketInternals)._sender!.sendFrame(message.frameList);
    return;
  }
  ws.send(message.payload, message.binary ? BINARY_MESSAGE : TEXT_MESSAGE);
}
