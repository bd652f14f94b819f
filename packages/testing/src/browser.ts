import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

export interface LaunchOptions {
  viewport: { width: number; height: number };
  /** Lets tests `page.goto('/path')` relative to the server under test. */
  baseUrl?: string;
  /** Prefix of the throwaway profile folder in the temp dir. */
  profilePrefix?: string;
  /** The browser's language (`navigator.language`, `Accept-Language`), e.g. `de-DE`. */
  locale?: string;
}

/**
 * Headless system Chromium with a fresh profile (no state leaks between test files) and the background services
 * that would phone home switched off, so a browser test never reaches the internet.
 */
export async function startChromium(options: LaunchOptions): Promise<TestBrowser> {
  const { context, profile } = await launchWithFreshProfile(options);
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    close: async () => {
      try {
        await context.close();
      } catch (error) {
        // Already gone (Chromium ended or dropped its connection, as it can on a loaded machine): what closing
        // wanted. Anything else is a real failure.
        if (!/has been closed/.test(String((error as Error).message))) throw error;
      } finally {
        rmSync(profile, { recursive: true, force: true });
      }
    },
  };
}

/** Launches a second time at most: on a loaded machine Chromium sometimes exits while it starts, before any test ran. */
async function launchWithFreshProfile(
  options: LaunchOptions,
): Promise<{ context: BrowserContext; profile: string }> {
  for (let attempt = 1; ; attempt++) {
    const profile = mkdtempSync(join(tmpdir(), options.profilePrefix ?? 'parley-chromium-'));
    try {
      return { context: await launch(profile, options), profile };
    } catch (error) {
      rmSync(profile, { recursive: true, force: true });
      if (attempt >= 2 || !EXITED_WHILE_STARTING.test(String((error as Error).message))) throw error;
    }
  }
}

/** What Playwright says when the browser process ended during its launch (not a wrong path or a bad argument). */
const EXITED_WHILE_STARTING = /has been closed|Browser closed|Target closed|Timeout .*exceeded/;

function launch(profile: string, options: LaunchOptions): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: options.viewport,
    ...(options.baseUrl ? { baseURL: options.baseUrl } : {}),
    ...(options.locale ? { locale: options.locale } : {}),
  });
}
