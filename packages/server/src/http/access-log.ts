import type { FastifyReply, FastifyRequest } from 'fastify';
import { LogController } from 'fastify';
import { type Logger, unredactedTwin } from '../logging/logger.ts';
import { REQUEST_ID_LOG_LABEL } from './request-id.ts';

/**
 * One access-log line per request (method, path, status, duration) instead of Fastify's two ("incoming request" and
 * "request completed"): half the log volume and half the serialisation cost on hot routes such as the token
 * endpoint, with nothing lost — the completed line carries the request too. Every line about a request carries
 * its id under `request_id`, the value of the response's `X-Request-Id`. A completed request's line holds only
 * serialized, secret-free fields, so it is written without the redaction pass (logging/logger.ts `unredactedTwin`);
 * an errored request's line carries the error and keeps it.
 */
export class AccessLogController extends LogController {
  private readonly lines: Logger;

  constructor(logger: Logger) {
    super({ requestIdLogLabel: REQUEST_ID_LOG_LABEL });
    this.lines = unredactedTwin(logger);
  }

  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (this.isLogDisabled(request)) return;
    const fields = { req: request, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else this.lines.info({ [REQUEST_ID_LOG_LABEL]: request.id, ...fields }, 'request completed');
  }
}
