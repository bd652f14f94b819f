import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from './app-error.ts';

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
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export function problemOf(error: AppError, instance?: string): Problem {
  return {
    type: `https://parley.dev/problems/${error.code}`,
    title: TITLES[error.status] ?? 'Error',
    status: error.status,
    detail: error.detail,
    code: error.code,
    ...(instance ? { instance } : {}),
    ...error.extensions,
  };
}

export function sendProblem(reply: FastifyReply, error: AppError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply
    .status(error.status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(problemOf(error, reply.request.url.split('?')[0]));
}

/**
 * Translates framework errors (schema validation, body parsing, payload size, unknown content type) into stable
 * problem codes, so callers never see Fastify's own wording as a contract.
 */
export function toAppError(error: FastifyError | Error): AppError | undefined {
  if (error instanceof AppError) return error;
  const fe = error as FastifyError;
  if (fe.validation) {
    const errors = fe.validation.map((v) => ({
      field: fieldOf(v.instancePath, v.params as Record<string, unknown>),
      message: v.message ?? 'is invalid',
    }));
    const where = fe.validationContext ?? 'request';
    return new AppError(
      400,
      'validation_failed',
      `The ${where} is invalid: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}.`,
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
      if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
      return sendProblem(reply, appError);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(reply, new AppError(500, 'internal_error', 'An internal error occurred.'));
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      reply,
      new AppError(404, 'route_not_found', `No route ${request.method} ${request.url.split('?')[0]}.`),
    ),
  );
}
