import { Readable } from 'node:stream';
import { requireJson } from '../http/lenient-json.ts';
import type { App } from '../http/types.ts';
import { bearerErrorResponses } from '../oauth/bearer.schemas.ts';
import { principalOf } from '../oauth/principal.ts';
import { ErasureReceipt, PrivacySelectorBody, Problem } from './privacy.schemas.ts';
import { type PrivacyService, selectorOf } from './privacy.service.ts';

const docs = (summary: string, description: string) => ({
  tags: ['privacy'],
  summary,
  description,
  security: [{ bearer: [] }],
});

/**
 * Erasure and export for API clients (`/platform/v1/privacy`, scope `privacy:write`; docs/privacy.md). Always the
 * token's company.
 */
export function registerPrivacyRoutes(app: App, privacy: PrivacyService): void {
  app.post(
    '/platform/v1/privacy/erasures',
    {
      config: { requiredScope: 'privacy:write' },
      preValidation: requireJson,
      schema: {
        ...docs(
          "Erase a visitor's data",
          'Exactly one of `visitor_sub`, `conversation_id`, `session_id`. Removes the conversations with their messages, search entries, attachments and blobs, read marks, feedback and CSAT, webhook outbox rows about them and their realtime history; live connections of the visitor are disconnected. Answers a receipt of ids and counts (kept for audit) and emits `visitor.erased`.',
        ),
        body: PrivacySelectorBody,
        response: { 200: ErasureReceipt, ...bearerErrorResponses, 400: Problem, 404: Problem, 415: Problem },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      return privacy.erase(principal.companyId, selectorOf(request.body), {
        actor: `client:${principal.clientId}`,
        ip: request.ip,
      });
    },
  );

  app.post(
    '/platform/v1/privacy/exports',
    {
      config: { requiredScope: 'privacy:write' },
      preValidation: requireJson,
      schema: {
        ...docs(
          "Export a visitor's data",
          'Same selectors as erasures. Answers one JSON document `{visitor, conversations:[{id, created_at, messages, attachments:[{id, name, content_type, size, sha256, url}]}]}`, streamed; `url` is a signed download link valid for 1 h.',
        ),
        body: PrivacySelectorBody,
        response: {
          200: {
            description: 'The export document (streamed JSON).',
            type: 'object',
            additionalProperties: true,
          },
          ...bearerErrorResponses,
          400: Problem,
          404: Problem,
          415: Problem,
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const parts = await privacy.exportJson(principal.companyId, selectorOf(request.body));
      reply.header('content-type', 'application/json; charset=utf-8').header('cache-control', 'no-store');
      return reply.send(Readable.from(parts));
    },
  );
}
