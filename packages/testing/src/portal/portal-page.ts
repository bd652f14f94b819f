import type { TestServer, TestServerOptions } from '../test-server.ts';
import { openSection, signIn, startPortalBrowser, type TestBrowser } from './browser.ts';
import { PASSWORD, type PortalUsers, startAcme } from './portal-fixtures.ts';

export interface PortalPage {
  server: TestServer;
  browser: TestBrowser;
  /** Acme's id. */
  companyId: string;
}

export interface PortalPageOptions {
  /** Acme's portal users (password {@link PASSWORD}); one admin, admin@acme.test, unless given. */
  users?: PortalUsers;
  /** Who signs in once the browser is open; `null` leaves the browser signed out. */
  signInAs?: string | null;
  /** The menu link to open after signing in. */
  section?: string;
  /** What the page must find when it first loads, made through the services before the browser opens. */
  seed?: (server: TestServer, companyId: string) => Promise<void>;
  server?: Omit<TestServerOptions, 'database'>;
}

/**
 * The setup every portal page test shares: a fresh server with one company (Acme), its users, and Chromium on the
 * portal, signed in and on the page under test. Whatever was started is stopped again if a later step fails, so a
 * broken setup cannot leave the test process hanging.
 */
export async function startPortalPage(options: PortalPageOptions = {}): Promise<PortalPage> {
  const { server, acmeId } = await startAcme(
    undefined,
    options.users ?? { 'admin@acme.test': 'admin' },
    options.server,
  );
  let browser: TestBrowser | undefined;
  try {
    await options.seed?.(server, acmeId);
    browser = await startPortalBrowser(server.baseUrl);
    const email = options.signInAs === undefined ? 'admin@acme.test' : options.signInAs;
    if (email !== null) await signIn(browser.page, email, PASSWORD);
    if (options.section) await openSection(browser.page, options.section);
    return { server, browser, companyId: acmeId };
  } catch (err) {
    await closePortalPage({ server, browser });
    throw err;
  }
}

export async function closePortalPage(
  portal: Partial<Pick<PortalPage, 'server' | 'browser'>>,
): Promise<void> {
  await portal.browser?.close();
  await portal.server?.close();
}
