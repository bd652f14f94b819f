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
  const profile = mkdtempSync(join(tmpdir(), options.profilePrefix ?? 'parley-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
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
