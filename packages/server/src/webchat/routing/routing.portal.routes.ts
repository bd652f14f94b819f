import type { AgentList, InboxQueue } from '@parley/wire-types';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AuditLog } from '../../audit/audit.service.ts';
import type { App } from '../../http/types.ts';
import { actorOf, companyOf, sessionOf } from '../../users/portal-session.ts';
import { platformConversationView } from '../conversation.ts';
import type { PlatformRoutingDeps } from './platform-routing.routes.ts';
import {
  AssignBody,
  AvailabilityBody,
  agentView,
  RoutingSettingsBody,
  routingSettingsView,
} from './routing.schemas.ts';
import type { RoutingService } from './routing.service.ts';
import type { RoutingSettingsStore } from './routing-settings.ts';

const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

/**
 * Routing in the portal (docs/routing.md): agents mark themselves available or away, see the queue and take from
 * it; admins reassign and see everyone's availability, and set the agent capacity and business hours.
 */
/**
 * What routing in the portal uses. The agents' commands are typed here (conversations/ builds on routing/, so
 * routing/ must not import it back).
 */
export interface RoutingPortalDeps {
  routing: Pick<RoutingService, 'agents' | 'agent' | 'setAvailability' | 'queue'>;
  routingSettings: Pick<RoutingSettingsStore, 'get' | 'update'>;
  commands: PlatformRoutingDeps['commands'] & { routeQueue(companyId: string): Promise<number> };
  audit: Pick<AuditLog, 'record'>;
}

export function registerRoutingPortalRoutes(app: App, deps: RoutingPortalDeps): void {
  const any = { portalAccess: 'any' as const };
  const actor = (request: FastifyRequest) => ({ id: actorOf(request), ip: request.ip });

  app.get(
    '/inbox/agents',
    { config: any },
    async (request): Promise<AgentList> => ({
      agents: (await deps.routing.agents(companyOf(request))).map(agentView),
    }),
  );

  app.put('/inbox/availability', { config: any, schema: { body: AvailabilityBody } }, async (request) => {
    const { user } = sessionOf(request);
    await deps.routing.setAvailability(user, request.body.availability);
    // An agent who just became available takes what waits, up to capacity.
    if (request.body.availability === 'available') await deps.commands.routeQueue(user.companyId);
    const me = await deps.routing.agent(user.companyId, user.id);
    return agentView(me);
  });

  app.get(
    '/inbox/queue',
    { config: any },
    async (request): Promise<InboxQueue> => ({
      items: (await deps.routing.queue(companyOf(request))).map(platformConversationView),
    }),
  );

  app.post('/inbox/conversations/:id/take', { config: any, schema: { params: IdParams } }, async (request) =>
    platformConversationView(
      await deps.commands.assign(
        companyOf(request),
        request.params.id,
        { userId: sessionOf(request).user.id },
        actor(request),
      ),
    ),
  );

  app.post(
    '/inbox/conversations/:id/assign',
    // Agents reassign too (docs/design.md "Agent workspace"): "assign to me" is their own id.
    { config: any, schema: { params: IdParams, body: AssignBody } },
    async (request) => {
      const userId = request.body?.user_id;
      return platformConversationView(
        await deps.commands.assign(
          companyOf(request),
          request.params.id,
          userId ? { userId } : 'next',
          actor(request),
        ),
      );
    },
  );

  app.get('/company/routing', async (request) =>
    routingSettingsView(await deps.routingSettings.get(companyOf(request))),
  );

  app.put('/company/routing', { schema: { body: RoutingSettingsBody } }, async (request) => {
    const companyId = companyOf(request);
    const { agent_capacity, business_hours } = request.body;
    const settings = await deps.routingSettings.update(companyId, {
      ...(agent_capacity !== undefined ? { agentCapacity: agent_capacity } : {}),
      ...(business_hours !== undefined ? { businessHours: business_hours } : {}),
    });
    await deps.audit.record({
      type: 'company.routing_changed',
      companyId,
      actor: actorOf(request),
      subject: companyId,
      ip: request.ip,
      details: { agent_capacity: settings.agentCapacity, business_hours: settings.businessHours !== null },
    });
    // A larger capacity may free room for what waits.
    await deps.commands.routeQueue(companyId);
    return routingSettingsView(settings);
  });
}
