import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { App } from '../http/types.ts';
import { LabelsBody, StatusBody } from '../workspace/workspace.schemas.ts';
import type { WorkspaceService } from '../workspace/workspace.service.ts';
import { actorOf, companyOf } from './portal-auth.ts';

const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

/**
 * The agent workspace in the portal inbox (docs/design.md "Agent workspace"), for admins and agents alike: a
 * conversation's working status and labels (the same bodies as the platform API) and the company's labels in use.
 */
export function registerWorkspaceRoutes(app: App, workspace: WorkspaceService): void {
  const any = { portalAccess: 'any' as const };
  const actor = (request: FastifyRequest) => ({ id: actorOf(request), ip: request.ip });

  app.put(
    '/inbox/conversations/:id/status',
    { config: any, schema: { params: IdParams, body: StatusBody } },
    async (request) =>
      workspace.setStatus(
        companyOf(request),
        request.params.id,
        {
          status: request.body.status,
          ...(request.body.snoozed_until !== undefined ? { snoozedUntil: request.body.snoozed_until } : {}),
        },
        actor(request),
      ),
  );

  app.put(
    '/inbox/conversations/:id/labels',
    { config: any, schema: { params: IdParams, body: LabelsBody } },
    async (request) =>
      workspace.setLabels(companyOf(request), request.params.id, request.body.labels, actor(request)),
  );

  app.get('/labels', { config: any }, async (request) => ({
    labels: await workspace.companyLabels(companyOf(request)),
  }));
}
