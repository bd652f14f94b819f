import type { FastifyRequest } from 'fastify';
import { UnsupportedMediaTypeError } from '../errors/app-error.ts';
import { useJsonBodyParser } from './json-body.ts';
import type { App } from './types.ts';

/**
 * Within `scope` (an encapsulated plugin), a JSON content type with an empty body parses as no body instead of
 * failing: clients commonly send `Content-Type: application/json` on bodiless POSTs (a check, a rotation).
 * Malformed JSON is still 400 `invalid_json`, and nesting is limited as everywhere (http/json-body.ts).
 */
export function acceptEmptyJsonBodies(scope: App): void {
  useJsonBodyParser(scope, { allowEmpty: true });
}

/** 415 for anything but `application/json` (parameters such as charset allowed), before the body is validated. */
export async function requireJson(request: FastifyRequest): Promise<void> {
  const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') throw new UnsupportedMediaTypeError('application/json');
}
