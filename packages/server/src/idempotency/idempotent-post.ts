import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.ts';
import { PROBLEM_CONTENT_TYPE, problemOf, toAppError } from '../http/problem.ts';
import type { IdempotencyKeys, KeyRef, StoredAnswer } from './idempotency-keys.ts';

const HEADER = 'idempotency-key';
/** 1–255 visible ASCII characters (RFC 5234 VCHAR, %x21–7E). */
const VALID_KEY = /^[\x21-\x7e]{1,255}$/;
const KEY_RULE = 'must be 1 to 255 visible ASCII characters';
const JSON_TYPE = 'application/json; charset=utf-8';

/** The header as route schemas declare it, so the API reference shows it (checked again by `answerIdempotently`). */
export const IdempotencyKeyHeaders = Type.Object({
  [HEADER]: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x21-\\x7e]+$',
      description:
        'Posts at most once: a repeat within 24 h with the same key answers the first answer (status and body) and ' +
        'posts nothing; the same key with another body is 422 `idempotency_key_reused`.',
    }),
  ),
});

/** What a route answers when it runs: its status and body. */
export interface RouteAnswer {
  status: number;
  body: unknown;
}

/**
 * Answers a POST that creates something at most once per `Idempotency-Key` (docs/design.md "Idempotency keys"):
 * without the header `run` simply runs; with it, a repeat within 24 h by the same company gets the first answer
 * (status and body, header `Idempotent-Replayed: true`) and nothing runs again; the same key with another request
 * (body, path or route) is 422 `idempotency_key_reused`. Of concurrent duplicates one runs and the others wait for
 * its answer (409 `idempotency_key_in_use` if it takes longer than 10 s). An answer below 500 is kept, errors
 * included; after a failure on our side (5xx) the key is released, so a retry runs anew.
 */
export async function answerIdempotently(
  keys: IdempotencyKeys,
  request: FastifyRequest,
  reply: FastifyReply,
  companyId: string,
  run: () => Promise<RouteAnswer>,
): Promise<FastifyReply> {
  const key = idempotencyKeyOf(request);
  if (key === undefined) {
    const { status, body } = await run();
    return reply.status(status).send(body);
  }
  const ref: KeyRef = { companyId, key };
  const claim = await keys.claim(ref, fingerprintOf(request));
  if (claim.kind === 'reused') throw keyReused();
  if (claim.kind === 'in_use') throw keyInUse();
  if (claim.kind === 'replay') return send(reply.header('idempotent-replayed', 'true'), claim.answer);
  let answer: StoredAnswer;
  try {
    const { status, body } = await run();
    answer = { status, contentType: JSON_TYPE, body: JSON.stringify(body) };
  } catch (err) {
    const refusal = toAppError(err as Error);
    if (!refusal || refusal.status >= 500) {
      await keys.release(ref);
      throw err;
    }
    const problem = problemOf(refusal, request.url.split('?')[0], request.id);
    answer = { status: refusal.status, contentType: PROBLEM_CONTENT_TYPE, body: JSON.stringify(problem) };
  }
  await keys.finish(ref, answer);
  return send(reply, answer);
}

const send = (reply: FastifyReply, answer: StoredAnswer): FastifyReply =>
  reply.status(answer.status).type(answer.contentType).send(answer.body);

/** The request's key, `undefined` without the header; 400 `validation_failed` when it breaks the rule. */
function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const value = request.headers[HEADER];
  if (value === undefined) return undefined;
  if (typeof value === 'string' && VALID_KEY.test(value)) return value;
  throw new AppError(400, 'validation_failed', `Invalid header: Idempotency-Key ${KEY_RULE}.`, {
    errors: [{ field: HEADER, in: 'headers', message: KEY_RULE }],
  });
}

/** What makes two requests the same: method, path and body (object keys in any order). */
function fingerprintOf(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method} ${request.url.split('?')[0]}\n${canonicalJson(request.body)}`)
    .digest('hex');
}

/** JSON with object keys sorted (bodies nest at most 64 levels: http/json-body.ts). */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const keyReused = () =>
  new AppError(
    422,
    'idempotency_key_reused',
    'This Idempotency-Key was used for another request (another body, conversation or route) in the last 24 hours.',
  );

const keyInUse = () =>
  new AppError(
    409,
    'idempotency_key_in_use',
    'A request with this Idempotency-Key is still running; retry shortly to get its answer.',
    {},
    { 'retry-after': '1' },
  );
