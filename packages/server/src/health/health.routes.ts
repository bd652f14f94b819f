import { Type } from '@sinclair/typebox';
import type { App } from '../http/types.ts';

/** How long one dependency may take to answer a readiness probe before it counts as unavailable. */
const CHECK_TIMEOUT_MS = 1_000;

/**
 * What `/readyz` looks at: a shutdown flag flipped at the start of a graceful drain, and one check per dependency
 * (the store; the broker with REDIS_URL) that resolves when it answers within `timeoutMs`.
 */
export interface Readiness {
  shuttingDown: boolean;
  checks: Record<string, (timeoutMs: number) => Promise<void>>;
}

const Status = Type.Object({
  status: Type.String(),
  checks: Type.Optional(Type.Record(Type.String(), Type.String())),
});

/**
 * `/healthz` answers while the process is alive (a dependency outage does not make it restart-worthy: the node
 * reconnects by itself); `/readyz` only when it can serve — every dependency answers and it is not draining — so
 * a load balancer routes around a node that cannot work and stops routing before a graceful shutdown.
 */
export function registerHealthRoutes(app: App, readiness: Readiness): void {
  app.get(
    '/healthz',
    { schema: { tags: ['health'], summary: 'Liveness: the process answers', response: { 200: Status } } },
    async () => ({
      status: 'ok',
    }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['health'],
        summary: 'Readiness: the database and broker answer and the node is not draining',
        response: { 200: Status, 503: Status },
      },
    },
    async (_request, reply) => {
      const checks: Record<string, string> = {};
      await Promise.all(
        Object.entries(readiness.checks).map(async ([name, check]) => {
          checks[name] = await withTimeout(check(CHECK_TIMEOUT_MS), CHECK_TIMEOUT_MS).then(
            () => 'ok',
            () => 'unavailable',
          );
        }),
      );
      if (readiness.shuttingDown) checks.node = 'draining';
      const ready = !readiness.shuttingDown && Object.values(checks).every((c) => c === 'ok');
      return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks });
    },
  );
}

function withTimeout(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
