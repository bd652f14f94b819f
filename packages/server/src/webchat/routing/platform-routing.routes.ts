import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { App } from '../../http/types.ts';
import { principalOf } from '../../oauth/principal.ts';
import { type Conversation, platformConversationView } from '../conversation.ts';
import { AssignBody, agentView } from './routing.schemas.ts';
import type { AssignTarget, RoutingService } from './routing.service.ts';

/**
 * What the platform's routing routes use. `assign` is typed here rather than imported: conversations/ (its
 * commands) builds on routing/, so routing/ must not import it back.
 */
export interface PlatformRoutingDeps {
  commands: {
    assign(
      companyId: string,
      conversationId: string,
      target: AssignTarget,
      actor: { id: string; ip?: string },
    ): Promise<Conversation>;
  };
  routing: Pick<RoutingService, 'queue' | 'agents'>;
}

const docs = (summary: string, description: string) => ({ tags: ['conversations'], summary, description });

/**
 * Routing on the platform API (docs/routing.md): assign a conversation (to a portal user, or round-robin), read
 * the queue and the agents' availability. Always the token's company.
 */
export function registerPlatformRoutingRoutes(app: App, deps: PlatformRoutingDeps): void {
  const actorOf = (request: FastifyRequest) => ({
    id: `client:${principalOf(request).clientId}`,
    ip: request.ip,
  });

  app.post(
    '/platform/v1/conversations/:id/assign',
    {
      config: { requiredScope: 'conversations:write' },
      schema: {
        ...docs(
          'Assign the conversation',
          'To the portal user `user_id` (reassign), or without it to the next available agent under capacity (round-robin, least recently assigned first). The agent takes the conversation over; answers it as it is then (`assignee_id` stays null when no agent was free).',
        ),
        params: Type.Object({ id: Type.String() }),
        body: AssignBody,
      },
    },
    async (request) => {
      const userId = request.body?.user_id;
      return platformConversationView(
        await deps.commands.assign(
          principalOf(request).companyId,
          request.params.id,
          userId ? { userId } : 'next',
          actorOf(request),
        ),
      );
    },
  );

  app.get(
    '/platform/v1/conversations/queue',
    {
      config: { requiredScope: 'conversations:read' },
      schema: docs('Read the queue', 'Open conversations waiting for an agent, longest waiting first.'),
    },
    async (request) => ({
      conversations: (await deps.routing.queue(principalOf(request).companyId)).map(platformConversationView),
    }),
  );

  app.get(
    '/platform/v1/agents',
    {
      config: { requiredScope: 'conversations:read' },
      schema: docs(
        'List the agents and their availability',
        'Every portal user of the company: `available` or `away`, and how many open conversations each holds.',
      ),
    },
    async (request) => ({
      agents: (await deps.routing.agents(principalOf(request).companyId)).map(agentView),
    }),
  );
}
