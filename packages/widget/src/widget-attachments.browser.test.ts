import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ensureDemo } from '@parley/server/internal/widget-assets/demo-company';
import { signIn, startPortalBrowser, type TestBrowser } from '@parley/testing/portal/browser';
import { createUsers, PASSWORD } from '@parley/testing/portal/portal-fixtures';
import { startTestServer, type TestServer } from '@parley/testing/test-server';
import { pngOf } from '@parley/testing/webchat/attachment-fixtures';
import type { Locator, Page } from 'playwright-core';

/**
 * Attachments end to end in headless Chromium: a visitor pastes an image into the widget on /demo, sees its upload
 * finish and its thumbnail (loaded through the signed link) in the transcript; an agent then sees the same image
 * in the portal inbox; a file the server refuses shows its reason in the widget. Screenshots go to
 * test-artifacts/widget/ (git-ignored).
 */
const artifacts = join(new URL('../../..', import.meta.url).pathname, 'test-artifacts', 'widget');
let server: TestServer;
let browser: TestBrowser;
let companyId: string;

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  server = await startTestServer();
  companyId = (await ensureDemo({ ...server.ctx, channels: server.ctx.webchat.channels })).companyId;
  await createUsers(server, companyId, { 'kim@demo.test': 'agent' });
  browser = await startPortalBrowser(server.baseUrl, { width: 1100, height: 800 });
  browser.page.on('pageerror', (err) => console.error('page error:', err.message));
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** Pastes files into an element as the browser does for a paste from the clipboard (a ClipboardEvent with files). */
async function pasteFiles(target: Locator, files: Array<{ name: string; type: string; base64: string }>) {
  await target.evaluate((el, list) => {
    const data = new DataTransfer();
    for (const f of list) {
      const bytes = Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0));
      data.items.add(new File([bytes], f.name, { type: f.type }));
    }
    el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, files);
}

/** Waits until an `<img>` has really loaded (decoded pixels), and answers its natural size. */
async function loadedSize(img: Locator): Promise<{ width: number; height: number }> {
  await img.waitFor({ timeout: 20_000 });
  await img.evaluate((el: HTMLImageElement) =>
    el.complete && el.naturalWidth > 0
      ? undefined
      : new Promise((resolve, reject) => {
          el.addEventListener('load', resolve, { once: true });
          el.addEventListener('error', () => reject(new Error(`image failed: ${el.src}`)), { once: true });
        }),
  );
  return img.evaluate((el: HTMLImageElement) => ({ width: el.naturalWidth, height: el.naturalHeight }));
}

test('a pasted image uploads with progress, shows as a thumbnail, and the agent sees it in the inbox', async () => {
  const page: Page = browser.page;
  await page.goto(`${server.baseUrl}/demo`);
  await page.locator('.launcher').click();
  await page.locator('.panel').waitFor({ state: 'visible' });
  await page.locator('.msg.digital_employee[data-status="complete"]').first().waitFor({ timeout: 20_000 });

  const image = pngOf(48, 32, [20, 120, 220]);
  const textarea = page.locator('textarea');
  await pasteFiles(textarea, [
    { name: 'screenshot.png', type: 'image/png', base64: image.toString('base64') },
  ]);
  // The upload shows in the tray, then turns into a chip once the server has it.
  await page.locator('.tray .chip').filter({ hasText: 'screenshot.png' }).waitFor({ timeout: 20_000 });
  await textarea.fill('Here is the problem');
  await page.screenshot({ path: join(artifacts, 'attachments-1-pasted.png') });
  await page.keyboard.press('Enter');

  const mine = page.locator('.msg.user[data-status="complete"]').filter({ hasText: 'Here is the problem' });
  await mine.waitFor({ timeout: 20_000 });
  const thumbnail = mine.locator('.attachments img.thumbnail');
  assert.deepEqual(await loadedSize(thumbnail), { width: 48, height: 32 });
  assert.match((await thumbnail.getAttribute('src')) ?? '', /\/webchat\/attachments\/.+signature=/);
  assert.equal(await thumbnail.getAttribute('alt'), 'screenshot.png');
  assert.equal(await page.locator('.tray').isHidden(), true, 'the tray empties once sent');
  await page.screenshot({ path: join(artifacts, 'attachments-2-thumbnail.png') });

  // A file the server refuses (HTML pretending to be a PNG) shows why, in words.
  await pasteFiles(textarea, [
    {
      name: 'fake.png',
      type: 'image/png',
      base64: Buffer.from('<html><script>1</script></html>').toString('base64'),
    },
  ]);
  const refusal = page.locator('.tray .upload.failed [role="alert"]');
  await refusal.waitFor({ timeout: 20_000 });
  assert.match((await refusal.textContent()) ?? '', /fake\.png: This type of file cannot be sent\./);
  await page.screenshot({ path: join(artifacts, 'attachments-3-refused.png') });

  // The agent's inbox shows the same image from the transcript.
  const agent = await browser.context.newPage();
  await signIn(agent, 'kim@demo.test', PASSWORD);
  const [conversation] = await server.ctx.webchat.conversations.listForCompany(companyId, { limit: 1 });
  await agent.locator(`a.conversation[data-id="${conversation!.id}"]`).click();
  const inInbox = agent.locator('.message.user img.thumbnail');
  assert.deepEqual(await loadedSize(inInbox), { width: 48, height: 32 });
  await agent.screenshot({ path: join(artifacts, 'attachments-4-inbox.png'), fullPage: true });

  // The agent answers with a PDF only: a chip in the inbox, and a chip (a download link) in the widget.
  const pdf = Buffer.from(
    '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n',
  );
  await agent
    .getByLabel('Attach files')
    .setInputFiles({ name: 'invoice.pdf', mimeType: 'application/pdf', buffer: pdf });
  await agent.getByRole('button', { name: 'Send reply' }).click();
  await agent.locator('.message.agent .attachment-chip').filter({ hasText: 'invoice.pdf' }).waitFor();
  const chip = page.locator('.msg.agent .attachments a.chip').filter({ hasText: 'invoice.pdf' });
  await chip.waitFor({ timeout: 20_000 });
  const href = (await chip.getAttribute('href'))!;
  const served = await fetch(href);
  assert.equal(served.status, 200);
  assert.match(served.headers.get('content-disposition') ?? '', /^attachment;/);
  assert.deepEqual(Buffer.from(await served.arrayBuffer()), pdf);
  await page.screenshot({ path: join(artifacts, 'attachments-5-agent-file.png') });
  await agent.close();
});
