import type { FastifyReply, FastifyRequest } from 'fastify';
import { LogController } from 'fastify';
import { type AccessLine, accessLineWriter, type Logger, pathOf } from '../logging/logger.ts';
import { REQUEST_ID_LOG_LABEL } from './request-id.ts';

/**
 * One access-log line per request (method, path, status, duration) instead of Fastify's two ("incoming request" and
 * "request completed"): half the log volume and half the serialisation cost on hot routes such as the token
 * endpoint, with nothing lost — the completed line carries the request too. Every line about a request carries
 * its id under `request_id`, the value of the response's `X-Request-Id`. A completed request's line holds only
 * secret-free fields, so it is written pre-serialised, without the redaction pass (packages/server/src/logging/logger.ts
 * `accessLineWriter`); an errored request's line carries the error and keeps it.
 */
export class AccessLogController extends LogController {
  private readonly writeLine: (line: AccessLine) => void;

  constructor(logger: Logger) {
    super({ requestIdLogLabel: REQUEST_ID_LOG_LABEL });
    this.writeLine = accessLineWriter(logger);
  }

  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (this.isLogDisabled(request)) return;
    if (error) {
      reply.log.error(
        { req: request, res: reply, responseTime: reply.elapsedTime, err: error },
        'request errored',
      );
      return;
    }
    this.writeLine({
      requestId: String(request.id),
      method: request.method,
      path: pathOf(request.url),
      remoteAddress: request.ip,
      statusCode: reply.statusCode,
      responseTime: reply.elapsedTime,
    });
  }
}
