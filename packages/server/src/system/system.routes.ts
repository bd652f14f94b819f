import type { SystemSnapshot } from '@parley/wire-types';
import { Type } from '@sinclair/typebox';
import type { App } from '../http/types.ts';
import { sessionOf } from '../users/portal-session.ts';
import type { SystemView } from './system.service.ts';

const Count = Type.Integer({ minimum: 0 });

const SystemSnapshotSchema = Type.Object({
  generated_at: Type.String({ format: 'date-time' }),
  nodes: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Type.String(),
      version: Type.String(),
      clients: Count,
      users: Count,
      subscriptions: Count,
      channels: Count,
      uptime_seconds: Count,
      this_node: Type.Boolean(),
    }),
  ),
  totals: Type.Object({ nodes: Count, clients: Count, subscriptions: Count, channels: Count }),
  replies: Type.Object({ queued: Count, streaming: Count }),
  webhooks: Type.Object({
    pending: Count,
    oldest_pending_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    failing_endpoints: Count,
    disabled_endpoints: Count,
  }),
  recent_errors: Type.Array(
    Type.Object({
      at: Type.String(),
      level: Type.Union([Type.Literal('warn'), Type.Literal('error'), Type.Literal('fatal')]),
      message: Type.String(),
      module: Type.Union([Type.String(), Type.Null()]),
      code: Type.Union([Type.String(), Type.Null()]),
      request_id: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
});

/** Settings → System (admins): what the cluster is doing now. The page asks again every few seconds. */
export function registerSystemRoutes(app: App, system: Pick<SystemView, 'snapshot'>): void {
  app.get(
    '/system',
    {
      schema: {
        summary: "The cluster's nodes, connections, the company's replies in flight and recent errors",
        response: { 200: SystemSnapshotSchema },
      },
    },
    async (request): Promise<SystemSnapshot> => system.snapshot(sessionOf(request).user.companyId),
  );
}
