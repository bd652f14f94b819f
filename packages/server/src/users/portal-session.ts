import type { FastifyReply, FastifyRequest } from 'fastify';
import { attributeToCompany } from '../logging/request-company.ts';
import { CsrfError, ForbiddenRoleError, NotSignedInError } from './portal-session.errors.ts';
import type { SessionsService } from './sessions.service.ts';
import type { PortalUser } from './users.service.ts';

export const SESSION_COOKIE = 'parley_portal_session';
export const CSRF_HEADER = 'x-csrf-token';

/** Who may call a portal route: `public` (sign-in), `any` signed-in user, or `admin` only. */
export type PortalAccess = 'public' | 'any' | 'admin';

export interface PortalSession {
  user: PortalUser;
  token: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    portalSession?: PortalSession;
  }
  interface FastifyContextConfig {
    /** Portal routes: who may call them. Unset on a /portal/api route means `admin` (closed by default). */
    portalAccess?: PortalAccess;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The portal API's gate, run before every /portal/api handler: resolves the session cookie, enforces the route's
 * role, and on state-changing methods requires the CSRF token (see SessionsService.csrfTokenFor for the pattern).
 */
export function portalGate(sessions: Pick<SessionsService, 'resume' | 'csrfTokenMatches'>) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const access = request.routeOptions.config.portalAccess ?? 'admin';
    if (access === 'public') return;
    const token = request.cookies?.[SESSION_COOKIE];
    const active = token ? await sessions.resume(token) : undefined;
    if (!token || !active) throw new NotSignedInError();
    attributeToCompany(request, reply, active.user.companyId);
    if (
      !SAFE_METHODS.has(request.method) &&
      !sessions.csrfTokenMatches(token, headerOf(request, CSRF_HEADER))
    ) {
      throw new CsrfError();
    }
    if (access === 'admin' && active.user.role !== 'admin') throw new ForbiddenRoleError();
    request.portalSession = { user: active.user, token };
  };
}

/** The signed-in user of a gated route (the gate guarantees one). */
export function sessionOf(request: FastifyRequest): PortalSession {
  if (!request.portalSession) throw new NotSignedInError();
  return request.portalSession;
}

/** The signed-in user's company: the only one a portal route reads or changes. */
export const companyOf = (request: FastifyRequest): string => sessionOf(request).user.companyId;

/** `user:<id>` — the audit actor for portal actions. */
export const actorOf = (request: FastifyRequest): string => `user:${sessionOf(request).user.id}`;

function headerOf(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
