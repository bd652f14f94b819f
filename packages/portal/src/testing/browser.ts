import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/** Screenshots of the portal tests (git-ignored). */
export const ARTIFACTS = fileURLToPath(new URL('../../../../test-artifacts/portal/', import.meta.url));

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/**
 * Headless system Chromium with a fresh profile per test file (no state leaks between tests), clipboard access
 * granted so "copy" buttons can be checked, and nothing that would reach the internet.
 */
export async function openBrowser(
  baseUrl: string,
  viewport = { width: 1280, height: 800 },
): Promise<TestBrowser> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const userDataDir = mkdtempSync(join(tmpdir(), 'parley-portal-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
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
    viewport,
    baseURL: baseUrl,
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
  context.setDefaultTimeout(30_000);
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    close: async () => {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto('/portal');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

export const screenshot = (page: Page, name: string) =>
  page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
