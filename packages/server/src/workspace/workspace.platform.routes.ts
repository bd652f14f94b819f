import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { App } from '../http/types.ts';
import { principalOf } from '../oauth/principal.ts';
import { LabelsBody, LabelsResponse, StatusBody, StatusResponse } from './workspace.schemas.ts';
import type { WorkspaceService } from './workspace.service.ts';

const IdParams = Type.Object({ id: Type.String() });
const docs = (summary: string, description: string) => ({ tags: ['conversations'], summary, description });

/**
 * The agent workspace on the platform API (docs/design.md "Agent workspace"): a conversation's working status and
 * labels, scope `conversations:write`, always within the caller's company.
 */
export function registerPlatformWorkspaceRoutes(app: App, workspace: WorkspaceService): void {
  const actorOf = (request: FastifyRequest) => ({
    id: `client:${principalOf(request).clientId}`,
    ip: request.ip,
  });

  app.put(
    '/platform/v1/conversations/:id/status',
    {
      config: { requiredScope: 'conversations:write' },
      schema: {
        ...docs(
          'Set the working status',
          '`open`, `pending` (waiting on the visitor) or `snoozed` until `snoozed_until`; a pending or snoozed conversation reopens when the visitor writes, a snoozed one also when its time comes. Closing is `POST …/close`; a closed conversation answers 409 `conversation_closed`. Sends `conversation.status_changed`.',
        ),
        params: IdParams,
        body: StatusBody,
        response: { 200: StatusResponse },
      },
    },
    async (request) =>
      workspace.setStatus(
        principalOf(request).companyId,
        request.params.id,
        {
          status: request.body.status,
          ...(request.body.snoozed_until !== undefined ? { snoozedUntil: request.body.snoozed_until } : {}),
        },
        actorOf(request),
      ),
  );

  app.put(
    '/platform/v1/conversations/:id/labels',
    {
      config: { requiredScope: 'conversations:write' },
      schema: {
        ...docs(
          'Replace the labels',
          'The company’s free-text labels on the conversation (at most 20 of 1–50 characters). Sends `conversation.labels_changed` when they changed.',
        ),
        params: IdParams,
        body: LabelsBody,
        response: { 200: LabelsResponse },
      },
    },
    async (request) =>
      workspace.setLabels(
        principalOf(request).companyId,
        request.params.id,
        request.body.labels,
        actorOf(request),
      ),
  );
}
