import './styles.css';
import { ApiError, api, onSessionLost, type SessionInfo, useSession } from './api.ts';
import { h } from './dom.ts';
import { renderApiClients } from './pages/api-clients.ts';
import { renderAudit } from './pages/audit.ts';
import { renderChannels } from './pages/channels.ts';
import { renderCompany } from './pages/company.ts';
import { renderConnectors } from './pages/connectors.ts';
import { renderDigitalEmployees } from './pages/digital-employees.ts';
import { renderAgentHome, renderForbidden } from './pages/forbidden.ts';
import { renderInbox } from './pages/inbox.ts';
import { renderKnowledge } from './pages/knowledge.ts';
import { renderProfile } from './pages/profile.ts';
import { renderSignIn } from './pages/sign-in.ts';
import { renderSystem } from './pages/system.ts';
import { renderUsers } from './pages/users.ts';
import { renderWebhooks } from './pages/webhooks.ts';
import { PORTAL_PAGES, PORTAL_SUBPAGES, type PortalPagePath, SIGN_IN_PATH } from './pages.ts';
import { navigate, onNavigate, type PageDef } from './router.ts';

/** What renders each page of pages.ts: the type makes a page without its renderer (or the reverse) a compile error. */
const RENDERERS: Record<PortalPagePath, PageDef['render']> = {
  '/portal/api-clients': renderApiClients,
  '/portal/connectors': renderConnectors,
  '/portal/webhooks': renderWebhooks,
  '/portal/knowledge': renderKnowledge,
  '/portal/company': renderCompany,
  '/portal/users': renderUsers,
  '/portal/channels': renderChannels,
  '/portal/digital-employees': renderDigitalEmployees,
  '/portal/audit': renderAudit,
  '/portal/system': renderSystem,
  '/portal/inbox': renderInbox,
  '/portal/profile': renderProfile,
};

/** Every page, in navigation order (pages.ts, the list the server serves the SPA for). */
const PAGES: PageDef[] = PORTAL_PAGES.map((page) => ({ ...page, render: RENDERERS[page.path] }));

const root = document.getElementById('app')!;
let session: SessionInfo | undefined;
/** The page on screen, for redrawing the header when the session changes (a new display name). */
let current: PageDef | undefined;

function homeFor(s: SessionInfo): string {
  return PAGES.find((p) => p.roles.includes(s.user.role))?.path ?? '/portal/';
}

async function render(): Promise<void> {
  if (!session) {
    if (location.pathname !== SIGN_IN_PATH) history.replaceState(null, '', SIGN_IN_PATH);
    renderSignIn(root, (s) => {
      session = s;
      useSession(s);
      navigate(homeFor(s), true);
    });
    return;
  }
  const path = location.pathname.replace(/\/+$/, '') || '/portal';
  if (path === '/portal' || path === SIGN_IN_PATH) {
    const home = homeFor(session);
    if (home !== '/portal/') return navigate(home, true);
  }
  const page = PAGES.find((p) => p.path === path) ?? subpageOf(path);
  current = page;
  const main = h('main', { id: 'main', tabindex: '-1' });
  root.replaceChildren(shell(session, page), main);
  document.title = `${page?.title ?? 'Portal'} · Parley`;
  if (!page) renderAgentHome(main);
  else if (!page.roles.includes(session.user.role)) renderForbidden(main);
  else {
    try {
      await page.render(main, session);
    } catch (err) {
      main.append(
        h(
          'p',
          { class: 'notice error', role: 'alert' },
          err instanceof ApiError ? err.detail : 'The page could not be loaded.',
        ),
      );
    }
  }
  main.focus({ preventScroll: true });
}

/** The page a subpage URL belongs to (`/portal/inbox/{id}` → the inbox, which opens that conversation). */
function subpageOf(path: string): PageDef | undefined {
  const sub = PORTAL_SUBPAGES.find((s) => {
    const prefix = s.pattern.slice(0, s.pattern.indexOf(':'));
    return path.startsWith(prefix) && !path.slice(prefix.length).includes('/');
  });
  return sub && PAGES.find((p) => p.path === sub.parent);
}

function shell(s: SessionInfo, current: PageDef | undefined): HTMLElement {
  const signOut = h('button', { type: 'button', class: 'secondary' }, 'Sign out');
  signOut.addEventListener('click', async () => {
    try {
      await api('DELETE', '/session');
    } finally {
      signedOut();
    }
  });
  const links = PAGES.filter((p) => p.roles.includes(s.user.role)).map((p) =>
    h(
      'li',
      {},
      h('a', { href: p.path, 'data-nav': true, 'aria-current': p === current ? 'page' : null }, p.title),
    ),
  );
  return h(
    'header',
    { class: 'top' },
    h('a', { class: 'skip', href: '#main' }, 'Skip to content'),
    h(
      'div',
      { class: 'bar' },
      h('span', { class: 'brand' }, 'Parley'),
      h(
        'span',
        { class: 'who' },
        `${s.company.name} · ${s.user.name ? `${s.user.name} · ` : ''}${s.user.email} (${s.user.role})`,
      ),
      signOut,
    ),
    links.length ? h('nav', { 'aria-label': 'Portal' }, h('ul', {}, ...links)) : null,
  );
}

/** Forgets the session and its CSRF token and shows sign-in: after signing out, or when the API says it ended. */
function signedOut(): void {
  session = undefined;
  useSession(undefined);
  navigate(SIGN_IN_PATH, true);
}

async function boot(): Promise<void> {
  onSessionLost(signedOut);
  onNavigate((how) => {
    // Back/forward between a page and its subpages (one inbox conversation to another): the page on screen follows
    // the URL itself (pages/inbox.ts), with its live connection kept.
    const path = location.pathname.replace(/\/+$/, '');
    const next = PAGES.find((p) => p.path === path) ?? subpageOf(path);
    if (
      how === 'popstate' &&
      session &&
      next &&
      next === current &&
      PORTAL_SUBPAGES.some((s) => s.parent === next.path)
    )
      return;
    void render();
  });
  // The profile or users page renamed the signed-in user: the header says the new name, the page stays as it is.
  window.addEventListener('portal:session-changed', () => {
    if (session) root.querySelector('header.top')?.replaceWith(shell(session, current));
  });
  try {
    session = await api<SessionInfo>('GET', '/session');
    useSession(session);
  } catch {
    session = undefined;
  }
  await render();
}

void boot();
