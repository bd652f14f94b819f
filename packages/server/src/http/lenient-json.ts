import type { FastifyRequest } from 'fastify';
import { AppError, UnsupportedMediaTypeError } from '../errors/app-error.ts';
import { parseBodyText } from './body-text.ts';
import type { App } from './types.ts';

/**
 * Within `scope` (an encapsulated plugin), a JSON content type with an empty body parses as no body instead of
 * failing: clients commonly send `Content-Type: application/json` on bodiless POSTs (a check, a rotation).
 * Malformed JSON is still 400 `invalid_json`.
 */
export function acceptEmptyJsonBodies(scope: App): void {
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser(
    'application/json',
    parseBodyText((_request, body, done) => {
      if (body === '') return done(null, undefined);
      try {
        done(null, JSON.parse(body));
      } catch {
        done(new AppError(400, 'invalid_json', 'The request body is not valid JSON.'), undefined);
      }
    }),
  );
}

/** 415 for anything but `application/json` (parameters such as charset allowed), before the body is validated. */
export async function requireJson(request: FastifyRequest): Promise<void> {
  const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') throw new UnsupportedMediaTypeError('application/json');
}
