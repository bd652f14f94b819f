import { Type } from '@sinclair/typebox';
import { sql } from 'kysely';
import type { AppContext } from '../context.ts';
import type { App } from '../http/types.ts';

const Status = Type.Object({
  status: Type.String(),
  checks: Type.Optional(Type.Record(Type.String(), Type.String())),
});

/**
 * `/healthz` answers while the process is alive; `/readyz` only when it can serve (database reachable, not
 * shutting down), so a load balancer stops routing before a graceful shutdown closes connections.
 */
export function registerHealthRoutes(app: App, ctx: AppContext, readiness: { shuttingDown: boolean }): void {
  app.get('/healthz', { schema: { tags: ['health'], response: { 200: Status } } }, async () => ({
    status: 'ok',
  }));

  app.get(
    '/readyz',
    { schema: { tags: ['health'], response: { 200: Status, 503: Status } } },
    async (_request, reply) => {
      const checks: Record<string, string> = {};
      try {
        await sql`select 1`.execute(ctx.store.db);
        checks.database = 'ok';
      } catch {
        checks.database = 'unavailable';
      }
      const ready = !readiness.shuttingDown && checks.database === 'ok';
      return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks });
    },
  );
}
