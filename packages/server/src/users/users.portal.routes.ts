import type { PortalUserList, PortalUserView } from '@parley/wire-types';
import { Type } from '@sinclair/typebox';
import type { AuditLog } from '../audit/audit.service.ts';
import type { App } from '../http/types.ts';
import { ForbiddenRoleError } from './portal-session.errors.ts';
import { actorOf, companyOf, sessionOf } from './portal-session.ts';
import { NAME_MAX_LENGTH } from './users.errors.ts';
import type { PortalUser, UsersService } from './users.service.ts';

const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
const NameBody = Type.Object(
  // Length and characters are the service's rule (users.service.ts normalizeDisplayName), answered as invalid_name.
  { name: Type.Union([Type.String({ maxLength: NAME_MAX_LENGTH * 4 }), Type.Null()]) },
  { additionalProperties: false },
);

/** A portal user as the portal shows them: never the password hash. */
export const portalUserView = (user: PortalUser): PortalUserView => ({
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
/** What the portal's user routes use. */
export interface UserPortalDeps {
  users: Pick<UsersService, 'list' | 'setName'>;
  audit: Pick<AuditLog, 'record'>;
}

export function registerUserRoutes(app: App, { users, audit }: UserPortalDeps): void {
  app.get(
    '/users',
    async (request): Promise<PortalUserList> => ({
      users: (await users.list(companyOf(request))).map(portalUserView),
    }),
  );

  app.patch(
    '/users/:id',
    { config: { portalAccess: 'any' }, schema: { params: IdParams, body: NameBody } },
    async (request) => {
      const self = sessionOf(request).user;
      if (request.params.id !== self.id && self.role !== 'admin') throw new ForbiddenRoleError();
      const user = await users.setName(companyOf(request), request.params.id, request.body.name);
      await audit.record({
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
