import type { SessionInfo } from '@parley/wire-types';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { AuditLog } from '../audit/audit.service.ts';
import type { CompaniesService } from '../companies/companies.service.ts';
import type { App } from '../http/types.ts';
import { NotSignedInError } from '../users/portal-session.errors.ts';
import { SESSION_COOKIE, sessionOf } from '../users/portal-session.ts';
import type { SessionsService } from '../users/sessions.service.ts';
import { InvalidCredentialsError } from '../users/users.errors.ts';
import type { PortalUser, UsersService } from '../users/users.service.ts';
import { normalizeEmail } from '../users/users.service.ts';
import type { LoginThrottle } from './login-throttle.ts';

const SignIn = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

/**
 * Sign-in, the current session, sign-out. The sign-in route takes JSON only: a cross-site HTML form cannot send
 * `application/json` without a CORS preflight we never grant, which keeps login CSRF out without a token.
 */
/** What sign-in, the current session and sign-out use. */
export interface SessionRouteDeps {
  users: Pick<UsersService, 'verifyCredentials'>;
  sessions: Pick<SessionsService, 'csrfTokenFor' | 'start' | 'resume' | 'end'>;
  /** Failed sign-ins per address and account (login-throttle.ts). */
  throttle: Pick<LoginThrottle, 'check' | 'recordFailure' | 'recordSuccess'>;
  companies: Pick<CompaniesService, 'get'>;
  audit: Pick<AuditLog, 'record'>;
  /** The cookie is `Secure` when the public URL is https (PARLEY_PUBLIC_URL). */
  publicUrl: string;
  sessionTtlSeconds: number;
}

export function registerSessionRoutes(app: App, deps: SessionRouteDeps): void {
  const { users, sessions, throttle } = deps;
  const secure = deps.publicUrl.startsWith('https:');

  const describe = async (user: PortalUser, token: string, expiresAt: string): Promise<SessionInfo> => {
    const company = await deps.companies.get(user.companyId);
    return {
      user: { id: user.id, email: user.email, name: user.name, role: user.role },
      company: { id: company.id, name: company.name },
      csrf_token: sessions.csrfTokenFor(token),
      expires_at: expiresAt,
    };
  };

  /** A user's session starting or ending, in their company's audit log. */
  const auditSession = (type: 'portal.signed_in' | 'portal.signed_out', user: PortalUser, ip: string) =>
    deps.audit.record({ type, companyId: user.companyId, actor: `user:${user.id}`, subject: user.id, ip });

  const setCookie = (reply: FastifyReply, token: string) =>
    reply.setCookie(SESSION_COOKIE, token, {
      path: '/portal',
      httpOnly: true,
      sameSite: 'strict',
      secure,
      maxAge: deps.sessionTtlSeconds,
    });

  app.post(
    '/session',
    { config: { portalAccess: 'public' }, schema: { body: SignIn } },
    async (request, reply) => {
      const email = normalizeEmail(request.body.email);
      await throttle.check(email, request.ip);
      const user = await users.verifyCredentials(email, request.body.password);
      if (!user) {
        await throttle.recordFailure(email, request.ip);
        await deps.audit.record({
          type: 'portal.sign_in_failed',
          actor: 'anonymous',
          subject: email,
          ip: request.ip,
        });
        throw new InvalidCredentialsError();
      }
      await throttle.recordSuccess(email, request.ip);
      // A fresh id on every sign-in (no session fixation); an earlier session of this browser ends.
      const previous = request.cookies[SESSION_COOKIE];
      if (previous) await sessions.end(previous);
      const started = await sessions.start(user);
      await auditSession('portal.signed_in', user, request.ip);
      setCookie(reply, started.token);
      return reply
        .header('cache-control', 'no-store')
        .send(await describe(user, started.token, started.expiresAt));
    },
  );

  app.get('/session', { config: { portalAccess: 'public' } }, async (request, reply) => {
    const token = request.cookies[SESSION_COOKIE];
    const active = token ? await sessions.resume(token) : undefined;
    if (!token || !active) throw new NotSignedInError();
    return reply
      .header('cache-control', 'no-store')
      .send(await describe(active.user, token, active.expiresAt));
  });

  app.delete('/session', { config: { portalAccess: 'any' } }, async (request, reply) => {
    const { user, token } = sessionOf(request);
    await sessions.end(token);
    await auditSession('portal.signed_out', user, request.ip);
    reply.clearCookie(SESSION_COOKIE, { path: '/portal', httpOnly: true, sameSite: 'strict', secure });
    return reply.status(204).send();
  });
}
