import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Binds `company_id` to every later log line of a request that authenticated as a company (an access token's
 * company, a portal user's), so the portal's system view can show a company its own warnings and errors
 * (system/recent-errors.ts) and nobody else's. Only a company the request proved is named: the SDK's `X-Company`
 * is any caller's claim, and its requests stay node-wide, in the log and the metrics only.
 */
export function attributeToCompany(request: FastifyRequest, reply: FastifyReply, companyId: string): void {
  const log = request.log.child({ company_id: companyId });
  request.log = log;
  reply.log = log;
}
