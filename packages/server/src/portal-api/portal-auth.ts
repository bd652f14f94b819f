import type { SessionsService } from '../users/sessions.service.ts';
import type { UsersService } from '../users/users.service.ts';
import type { LoginThrottle } from './login-throttle.ts';
import type { PortalServices } from './portal-services.ts';

// Who is signed in lives with the users and their sessions (users/portal-session.ts), so a capability's portal
// routes can ask without reaching up into this surface.
export {
  actorOf,
  CSRF_HEADER,
  companyOf,
  type PortalAccess,
  type PortalSession,
  portalGate,
  SESSION_COOKIE,
  sessionOf,
} from '../users/portal-session.ts';

/** What the portal's page routes are handed (portal.routes.ts), built once by the composition root (app.ts). */
export interface PortalDeps {
  ctx: PortalServices;
  users: UsersService;
  sessions: SessionsService;
  throttle: LoginThrottle;
}
