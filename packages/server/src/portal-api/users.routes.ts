import { Type } from '@sinclair/typebox';
import type { App } from '../http/types.ts';
import { ForbiddenRoleError } from '../users/portal-session.errors.ts';
import { NAME_MAX_LENGTH } from '../users/users.errors.ts';
import type { PortalUser } from '../users/users.service.ts';
import { actorOf, companyOf, type PortalDeps, sessionOf } from './portal-auth.ts';

const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
const NameBody = Type.Object(
  // Length and characters are the service's rule (users.service.ts normalizeDisplayName), answered as invalid_name.
  { name: Type.Union([Type.String({ maxLength: NAME_MAX_LENGTH * 4 }), Type.Null()]) },
  { additionalProperties: false },
);

/** A portal user as the portal shows them: never the password hash. */
export const portalUserView = (user: PortalUser) => ({
  id: user.id,
  email: user.email,
  name: user.name,
  role: user.role,
  created_at: user.createdAt,
  last_login_at: user.lastLoginAt,
});

/**
 * The company's portal users and their display names (docs/design.md "Agents' names"): admins list them and name
 * anyone of the company; every user names themselves (the portal's profile page). The name is what visitors see on
 * the user's messages and in "… joined the conversation".
 */
export function registerUserRoutes(app: App, { ctx, users }: PortalDeps): void {
  app.get('/users', async (request) => ({
    users: (await users.list(companyOf(request))).map(portalUserView),
  }));

  app.patch(
    '/users/:id',
    { config: { portalAccess: 'any' }, schema: { params: IdParams, body: NameBody } },
    async (request) => {
      const self = sessionOf(request).user;
      if (request.params.id !== self.id && self.role !== 'admin') throw new ForbiddenRoleError();
      const user = await users.setName(companyOf(request), request.params.id, request.body.name);
      await ctx.audit.record({
        type: 'portal_user.renamed',
        companyId: user.companyId,
        actor: actorOf(request),
        subject: user.id,
        ip: request.ip,
        details: { name: user.name },
      });
      return portalUserView(user);
    },
  );
}
