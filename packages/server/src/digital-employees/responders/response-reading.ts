import type { SilenceDeadline } from './deadline.ts';
import { ResponderBadResponseError } from './responder-errors.ts';
import { toResponderError } from './to-responder-error.ts';

/** Largest answer accepted from a bot; a reply is chat text, anything bigger is a misbehaving endpoint. */
export const MAX_RESPONSE_BYTES = 1024 * 1024;

/** `application/json; charset=utf-8` → `application/json`. */
export function mediaTypeOf(response: Response): string {
  return (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * The body as decoded text chunks, restarting the silence timer on every chunk and refusing oversized bodies. A
 * failure mid-body becomes the deadline's abort/timeout error, or `responder_unreachable` for a dropped connection.
 */
export async function* textChunks(
  response: Response,
  deadline: SilenceDeadline,
  timeoutMs: number,
): AsyncGenerator<string> {
  if (!response.body) return;
  const reader = response.body.getReader();
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let received = 0;
  try {
    while (true) {
      let result: ReadableStreamReadResult<Uint8Array>;
      try {
        result = await reader.read();
      } catch (err) {
        // A dropped connection, or the outbound client's own inactivity limit (`connector_timeout`).
        throw toResponderError(err, deadline, timeoutMs);
      }
      if (result.done) break;
      deadline.touch();
      received += result.value.byteLength;
      if (received > MAX_RESPONSE_BYTES)
        throw new ResponderBadResponseError(`the body exceeds ${MAX_RESPONSE_BYTES} bytes`);
      yield decodeChunk(decoder, result.value);
    }
    const tail = decodeChunk(decoder);
    if (tail) yield tail;
  } finally {
    reader.cancel().catch(() => {});
  }
}

function decodeChunk(decoder: TextDecoder, bytes?: Uint8Array): string {
  try {
    return bytes ? decoder.decode(bytes, { stream: true }) : decoder.decode();
  } catch {
    throw new ResponderBadResponseError('the body is not valid UTF-8');
  }
}

/** Splits text chunks into lines (LF or CRLF), yielding the last line even without a final newline. */
export async function* lines(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  let pending = '';
  for await (const chunk of chunks) {
    pending += chunk;
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      yield pending.slice(0, newline).replace(/\r$/, '');
      pending = pending.slice(newline + 1);
      newline = pending.indexOf('\n');
    }
  }
  if (pending) yield pending.replace(/\r$/, '');
}
