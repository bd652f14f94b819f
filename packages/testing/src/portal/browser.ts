import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { startChromium, type TestBrowser } from '../browser.ts';
import { waitFor } from '../wait.ts';

export type { TestBrowser };

/** Screenshots of the portal tests (git-ignored). */
export const ARTIFACTS = fileURLToPath(new URL('../../../../test-artifacts/portal/', import.meta.url));

/**
 * The shared test Chromium pointed at the portal, with clipboard access granted so "copy" buttons can be checked.
 */
export async function startPortalBrowser(
  baseUrl: string,
  viewport = { width: 1280, height: 800 },
): Promise<TestBrowser> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const browser = await startChromium({ viewport, baseUrl, profilePrefix: 'parley-portal-chromium-' });
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
  browser.context.setDefaultTimeout(30_000);
  return browser;
}

export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto('/portal');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** Follows a menu link and waits for the page it opens (its level-1 heading carries the same name). */
export async function openSection(page: Page, name: string): Promise<void> {
  await page.getByRole('link', { name }).click();
  await page.getByRole('heading', { name, level: 1 }).waitFor();
}

/**
 * A fresh folder outside the repository for the screenshots of one run of a test file, to look at after it
 * (`ls -td /tmp/parley-{name}-*`): one per run, so runs in other worktrees never overwrite them.
 */
export function screenshotFolder(name: string): (page: Page, shot: string) => Promise<Buffer> {
  const folder = mkdtempSync(join(tmpdir(), `parley-${name}-`));
  return (page, shot) => page.screenshot({ path: join(folder, `${shot}.png`) });
}

export const screenshot = (page: Page, name: string) =>
  page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

/**
 * Waits until the clipboard holds `expected` (a copy button writes it asynchronously after the click, and says
 * "Copied" only for 2 s, too short to wait on when the machine is busy); throws with what it held last.
 */
export async function waitForClipboard(page: Page, expected: string): Promise<void> {
  let last = '';
  try {
    await waitFor('the clipboard', async () => {
      last = await page.evaluate(() => navigator.clipboard.readText());
      return last === expected;
    });
  } catch {
    assert.equal(last, expected, 'the clipboard');
  }
}
