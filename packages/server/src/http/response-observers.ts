import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from './types.ts';

/** Something that looks at every answered request once it is finished (its metrics, its trace span). */
export type ResponseObserver = (request: FastifyRequest, reply: FastifyReply) => void;

/**
 * One `onResponse` hook for all observers of finished requests, however many there are: each hook Fastify runs costs
 * a turn of its hook runner on every request of every route, the token endpoint's hot path included. Observers run
 * in the order given; absent ones (tracing while no exporter is configured) cost nothing. Callback-style: a
 * callback costs less than a promise.
 */
export function registerResponseObservers(
  app: App,
  observers: ReadonlyArray<ResponseObserver | undefined>,
): void {
  const present = observers.filter((o): o is ResponseObserver => o !== undefined);
  if (present.length === 0) return;
  if (present.length === 1) {
    const only = present[0]!;
    app.addHook('onResponse', (request, reply, done) => {
      only(request, reply);
      done();
    });
    return;
  }
  app.addHook('onResponse', (request, reply, done) => {
    for (const observe of present) observe(request, reply);
    done();
  });
}
