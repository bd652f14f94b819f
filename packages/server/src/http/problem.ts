import { MAX_JSON_DEPTH } from '@parley/realtime';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.ts';
import { dependencyUnavailable } from '../errors/unavailable.ts';
import { ROUTER_OPTIONS } from './route-methods.ts';
import { UNSAFE_TEXT_MESSAGE } from './unsafe-text.ts';

/** RFC 9457 problem details, the error body of every non-OAuth route. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  instance?: string;
  [extension: string]: unknown;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** `requestId` becomes the `request_id` extension member: the id the response's `X-Request-Id` carries. */
export function problemOf(error: AppError, instance?: string, requestId?: string): Problem {
  return {
    type: `https://parley.dev/problems/${error.code}`,
    title: TITLES[error.status] ?? 'Error',
    status: error.status,
    detail: error.detail,
    code: error.code,
    ...(instance ? { instance } : {}),
    ...(requestId ? { request_id: requestId } : {}),
    ...error.extensions,
  };
}

export function sendProblem(reply: FastifyReply, error: AppError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply
    .status(error.status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(problemOf(error, reply.request.url.split('?')[0], reply.request.id));
}

/** Where a part of a request is: Fastify's validation-context names, also used in `errors[].in`. */
export type RequestPart = 'body' | 'querystring' | 'params' | 'headers';

const PART_NAMES: Record<RequestPart, string> = {
  body: 'body',
  querystring: 'query string',
  params: 'path',
  headers: 'header',
};

/** A string holding U+0000 or an unpaired surrogate (the rule of src/http/unsafe-text.ts), at `field` of `part`. */
export const unsafeText = (part: RequestPart, field: string): AppError =>
  new AppError(400, 'validation_failed', `Invalid ${PART_NAMES[part]}: ${field} ${UNSAFE_TEXT_MESSAGE}.`, {
    errors: [{ field, in: part, message: UNSAFE_TEXT_MESSAGE }],
  });

const JSON_TOO_DEEP_MESSAGE = `must not nest arrays and objects deeper than ${MAX_JSON_DEPTH} levels`;

/** JSON nested deeper than the limit (docs/design.md "JSON nesting"), at `field` of `part`. */
export const jsonTooDeep = (part: RequestPart, field: string): AppError =>
  new AppError(400, 'validation_failed', `Invalid ${PART_NAMES[part]}: ${field} ${JSON_TOO_DEEP_MESSAGE}.`, {
    errors: [{ field, in: part, message: JSON_TOO_DEEP_MESSAGE }],
  });

/** A `%` escape that is not `%XX`, or escapes that do not decode to UTF-8 (RFC 3986 §2.1, §2.5). */
/** Headers or body not received in time (src/http/time-limits.ts); the connection is closed after the answer. */
export const requestTimedOut = (): AppError =>
  new AppError(408, 'request_timeout', 'The request was not received in time.');

export const malformedUrl = (): AppError =>
  new AppError(400, 'malformed_url', 'The URL holds a malformed percent-encoding.');

export const routeNotFound = (method: string, path: string): AppError =>
  new AppError(404, 'route_not_found', `No route ${method} ${path}.`);

/** RFC 9110 §15.5.6: the path exists, the method does not; `Allow` lists the methods it has. */
export const methodNotAllowed = (method: string, allowed: string[]): AppError =>
  new AppError(
    405,
    'method_not_allowed',
    `This path does not accept ${method}; it accepts ${allowed.join(', ')}.`,
    { allowed_methods: allowed },
    { allow: allowed.join(', ') },
  );

/**
 * At most this many schema errors are reported (`errors[]`, the detail): a body of 100,000 wrong items would
 * otherwise cost seconds of CPU and answer tens of megabytes (the schemas validate with `allErrors`).
 */
export const MAX_REPORTED_ERRORS = 20;

/**
 * Fastify's schema error message, from the first `MAX_REPORTED_ERRORS` errors only (Fastify's own formatter joins
 * them all); the problem body is built by `toAppError` from the errors themselves.
 */
export function formatSchemaErrors(
  errors: ReadonlyArray<{ instancePath?: string; message?: string }>,
  dataVar: string,
): Error {
  const shown = errors
    .slice(0, MAX_REPORTED_ERRORS)
    .map((e) => `${dataVar}${e.instancePath ?? ''} ${e.message}`);
  const more = errors.length - shown.length;
  return new Error(`${shown.join(', ')}${more > 0 ? `, and ${more} more` : ''}`);
}

/**
 * Translates framework errors (schema validation, body parsing, payload size, unknown content type) into stable
 * problem codes, so callers never see Fastify's own wording as a contract.
 */
export function toAppError(error: FastifyError | Error): AppError | undefined {
  if (error instanceof AppError) return error;
  const unavailable = dependencyUnavailable(error);
  if (unavailable) return unavailable;
  const fe = error as FastifyError;
  if (fe.validation) {
    const errors = fe.validation.slice(0, MAX_REPORTED_ERRORS).map((v) => ({
      field: fieldOf(v.instancePath, v.params as Record<string, unknown>),
      message: v.message ?? 'is invalid',
    }));
    const more = fe.validation.length - errors.length;
    const where = fe.validationContext ?? 'request';
    return new AppError(
      400,
      'validation_failed',
      `The ${where} is invalid: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}${more > 0 ? `; and ${more} more` : ''}.`,
      {
        errors,
      },
    );
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError(415, 'unsupported_media_type', 'The request content type is not accepted here.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError(413, 'payload_too_large', 'The request body is too large.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError(400, 'invalid_json', 'The request body is empty but the content type is JSON.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError(400, 'invalid_json', 'The request body is not valid JSON.');
    case 'FST_ERR_CTP_EMPTY_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return new AppError(415, 'unsupported_media_type', 'The request content type is not accepted here.');
    // Raised before routing (Fastify's `frameworkErrors`): the path cannot be matched to any route.
    case 'FST_ERR_BAD_URL':
      return malformedUrl();
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AppError(
        400,
        'path_parameter_too_long',
        `A path parameter is longer than ${ROUTER_OPTIONS.maxParamLength} characters.`,
      );
    // Raised by Node's HTTP parser before Fastify sees a request (src/http/client-errors.ts).
    case 'HPE_HEADER_OVERFLOW':
      return new AppError(431, 'headers_too_large', 'The request line and headers are too large.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return requestTimedOut();
  }
  if (fe.code?.startsWith('HPE_')) {
    return new AppError(400, 'malformed_request', 'The request is not valid HTTP/1.1.');
  }
  if (error instanceof SyntaxError && fe.statusCode === 400) {
    return new AppError(400, 'invalid_json', 'The request body is not valid JSON.');
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new AppError(fe.statusCode, 'bad_request', 'The request could not be processed.');
  }
  return undefined;
}

function fieldOf(instancePath: string, params: Record<string, unknown>): string {
  const base = instancePath.replace(/^\//, '').replace(/\//g, '.');
  const extra = (params.missingProperty ?? params.additionalProperty) as string | undefined;
  return [base, extra].filter(Boolean).join('.') || '(body)';
}

/** One serializer for the non-OAuth boundary: every error leaves as problem+json, internals never leak. */
export function registerProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const appError = toAppError(error);
    if (appError) {
      // An outage is the dependency's news, logged where it is noticed; a line per refused request would flood.
      if (appError.status >= 500 && appError.status !== 503)
        request.log.error({ err: error }, 'request failed');
      return sendProblem(reply, appError);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(reply, new AppError(500, 'internal_error', 'An internal error occurred.'));
  });
}
