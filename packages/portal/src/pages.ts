/**
 * The portal's pages: the one list its router renders (main.ts gives each path its render function) and the server
 * answers with the SPA when such a URL is opened in a new tab, reloaded or followed from a link
 * (packages/server/src/portal-api/spa.routes.ts). A page added here is both routed and served; a page missing here
 * cannot be routed at all. Plain data, no DOM: the server imports it.
 */
export type Role = 'admin' | 'agent';

export interface PortalPageEntry {
  path: `/portal/${string}`;
  title: string;
  /** Roles that see this page (the API enforces the same rule; this only hides what would be refused). */
  roles: readonly Role[];
}

/** Every page, in navigation order. Settings pages are admin-only; the API refuses agents the same way. */
export const PORTAL_PAGES = [
  // First: agents and admins land on the inbox (main.ts picks the first page a role may see); settings follow.
  { path: '/portal/inbox', title: 'Inbox', roles: ['admin', 'agent'] },
  { path: '/portal/api-clients', title: 'API clients', roles: ['admin'] },
  { path: '/portal/connectors', title: 'Connectors', roles: ['admin'] },
  { path: '/portal/webhooks', title: 'Webhooks', roles: ['admin'] },
  { path: '/portal/company', title: 'Company', roles: ['admin'] },
  { path: '/portal/users', title: 'Users', roles: ['admin'] },
  { path: '/portal/channels', title: 'Channels', roles: ['admin'] },
  { path: '/portal/digital-employees', title: 'Digital employees', roles: ['admin'] },
  { path: '/portal/knowledge', title: 'Knowledge', roles: ['admin'] },
  { path: '/portal/audit', title: 'Audit log', roles: ['admin'] },
  { path: '/portal/system', title: 'System', roles: ['admin'] },
  { path: '/portal/profile', title: 'Your profile', roles: ['admin', 'agent'] },
] as const satisfies readonly PortalPageEntry[];

export type PortalPagePath = (typeof PORTAL_PAGES)[number]['path'];

/** Where a signed-out visitor is sent, and where the portal's root leads before it picks the user's home page. */
export const SIGN_IN_PATH = '/portal/sign-in';

/**
 * Pages below a page: one conversation of the inbox at its own URL (a link to share, a reload that keeps it open).
 * Each pattern is a route of the server's router (`:id` one path segment); main.ts renders the parent page.
 */
export const PORTAL_SUBPAGES = [
  { pattern: '/portal/inbox/:id', parent: '/portal/inbox' },
] as const satisfies ReadonlyArray<{
  pattern: `/portal/${string}`;
  parent: PortalPagePath;
}>;

/** Every URL the SPA answers: its root, the sign-in, each page and each page's subpages. */
export const SPA_PATHS: readonly string[] = [
  '/portal',
  SIGN_IN_PATH,
  ...PORTAL_PAGES.map((p) => p.path),
  ...PORTAL_SUBPAGES.map((p) => p.pattern),
];
