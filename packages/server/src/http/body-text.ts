import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.ts';

/** What a text body parser does with the whole body once it has arrived (Fastify's `parseAs: 'string'` shape). */
export type TextBodyParser = (
  request: FastifyRequest,
  body: string,
  done: (err: Error | null, value?: unknown) => void,
) => void;

/** A content-type parser for Fastify that reads the body with `readBodyText`, then hands it to `parse`. */
export function parseBodyText(parse: TextBodyParser, limit?: number) {
  return (
    request: FastifyRequest,
    payload: Readable,
    done: (err: Error | null, value?: unknown) => void,
  ): void => {
    const bodyLimit = Math.min(limit ?? Number.POSITIVE_INFINITY, request.routeOptions.bodyLimit);
    readBodyText(request, payload, bodyLimit, (err, text) =>
      err ? done(err, undefined) : parse(request, text!, done),
    );
  };
}

/**
 * Reads a text body (JSON, a form, plain text) up to `limit` bytes, keeping what has arrived as strings on V8's heap
 * rather than as the socket's chunks (Fastify's own `parseAs: 'string'` keeps a list of Buffers and decodes at the
 * end). The difference shows after a slow-body attack: each chunk is a malloc'd block of up to 64 KiB, and hundreds
 * of stalled bodies leave the C heap so fragmented that glibc keeps every page after they are freed — 300 stalled
 * 1 MiB bodies kept the RSS 265 MiB up for good (bench/edge/slow-body.bench.ts). Decoded at once, a chunk lives
 * until the next scavenge, and V8 gives the pages of collected strings back. UTF-8 split across chunks is decoded
 * correctly (StringDecoder holds the partial character).
 */
export function readBodyText(
  request: FastifyRequest,
  payload: Readable,
  limit: number,
  done: (err: Error | null, text?: string) => void,
): void {
  if (Number(request.headers['content-length']) > limit) {
    done(payloadTooLarge());
    return;
  }
  const decoder = new StringDecoder('utf8');
  let text = '';
  let received = 0;
  const finish = (err: Error | null) => {
    payload.removeListener('data', onData);
    payload.removeListener('end', onEnd);
    payload.removeListener('error', onError);
    if (err) done(err);
    else done(null, text + decoder.end());
  };
  const onData = (chunk: Buffer | string) => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    received += bytes.length;
    if (received > limit) finish(payloadTooLarge());
    else text += decoder.write(bytes);
  };
  const onEnd = () => finish(null);
  // A connection cut mid-body (a time-out, a client gone) is the client's doing: 400, as Fastify answers it.
  const onError = (err: Error & { statusCode?: number }) => {
    if (!(typeof err.statusCode === 'number' && err.statusCode >= 400)) err.statusCode = 400;
    finish(err);
  };
  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', onError);
  payload.resume();
}

const payloadTooLarge = () => new AppError(413, 'payload_too_large', 'The request body is too large.');
